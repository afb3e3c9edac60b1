"""Periodic schedules (0013): a team's cron timetable that creates todos for one of its endpoints.

Writes by people (``op``: an operator or admin of the schedule's team; None: the system, i.e.
``manage.py schedule``) are one statement each, audited (``schedule.*``) and checked in SQL: the
owner endpoint must be an active endpoint of the team and the queue in its scope, else the
statement writes nothing and :func:`_finish` names the field. The loop's firing is two statements
in one transaction (:func:`fire_due`): :func:`lock_due` takes due schedules ``FOR UPDATE SKIP
LOCKED``, Python works out their ticks (``todos.core.schedule_times.plan``), and :func:`fire` records
each fired tick in ``schedule_fires`` (primary key: schedule and tick), creates its todo
(idempotency key ``schedule:<id>:<tick>``) and moves ``next_fire_at`` on, so a tick fires once
across every process, and a crash before COMMIT leaves the tick to the next sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core import schedule_times
from todos.core.db import Statement, pooled_connection
from todos.core.errors import Forbidden, Invalid, NotFound, StaleSnapshot
from todos.core.store import inputs
from todos.core.store.agent import DEDUPE_PREDICATE
from todos.core.store.fragments import ACTING_ROLES, audit_row, log_change, log_todos, member_of, notify_ready
from todos.core.store.scopes import AgentScope, OperatorScope
from todos.core.words import ChangeOp

# Who writes a schedule: a person on the Board (an operator), an agent managing its own schedules
# (the agent verbs ``create_schedule``, ``pause_schedule``…), or None, the shell.
Caller = OperatorScope | AgentScope | None

SWEEP_LIMIT = 500
INTERVAL_SECONDS = 0.25  # the loop's pause between sweeps (todos/ops/loops.py): lateness ≤ about this
PREVIEW_COUNT = 5

SCHEDULE_COLUMNS: LiteralString = (
    "id, team_id, name, cron, timezone, endpoint_id, queue, title, kind, payload, priority, max_attempts,"
    " requires, missed, paused, next_fire_at, created_at, updated_at"
)


@dataclass(frozen=True)
class Schedule:
    id: UUID
    team_id: UUID
    name: str
    cron: str
    timezone: str
    endpoint_id: UUID
    queue: str
    title: str
    kind: str | None
    payload: Any
    priority: int
    max_attempts: int
    requires: list[str]
    missed: str
    paused: bool
    next_fire_at: datetime
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: dict) -> Schedule:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Fired:
    schedule_id: UUID
    tick: datetime
    todo_id: str | None
    how: str
    schedule: Schedule | None = None  # a manual fire's schedule as the statement fired it


def _uuid(field: str, value: Any) -> UUID:
    try:
        return UUID(str(value))
    except ValueError:
        raise Invalid(field, f"must be the {field}'s id (a UUID), got {str(value)[:40]!r}") from None


# The fields of a schedule's definition besides its owner (``endpoint_id``): what :func:`template`
# checks and :func:`update` rewrites whole.
DEFINITION_FIELDS = (
    "name",
    "cron",
    "timezone",
    "queue",
    "title",
    "kind",
    "payload",
    "priority",
    "max_attempts",
    "requires",
    "missed",
)


def template(
    *,
    name: Any,
    cron: Any,
    timezone: Any,
    endpoint_id: Any,
    queue: Any,
    title: Any,
    kind: Any = None,
    payload: Any = None,
    priority: Any = None,
    max_attempts: Any = None,
    requires: Any = None,
    missed: Any = None,
    now: datetime,
) -> dict[str, Any]:
    """Check every field of a schedule (before any statement runs) and compute its first tick."""
    expr = schedule_times.cron(cron)
    tz = schedule_times.zone(timezone)
    return {
        "name": _name(name),
        "cron": expr,
        "timezone": tz.key,
        "endpoint_id": _uuid("endpoint", endpoint_id),
        "queue": inputs.queue(queue),
        "title": inputs.title(title),
        "kind": inputs.label("kind", kind),
        "payload": inputs.json_value("payload", payload),
        "priority": inputs.priority(priority),
        "max_attempts": inputs.max_attempts(max_attempts),
        "requires": inputs.capability_labels("requires", requires),
        "missed": schedule_times.policy(missed),
        "next_fire_at": schedule_times.next_tick(expr, tz, now),
    }


def _name(value: Any) -> str:
    text = inputs.require_line("name", value if value is not None else "").strip()
    if not text:
        raise Invalid("name", "is required")
    if len(text) > 200:
        raise Invalid("name", f"must be at most 200 characters, got {len(text)}")
    return text


def _actor(op: Caller) -> dict[str, Any]:
    if isinstance(op, AgentScope):
        # The agent's guard (see _may) compares the schedule's owner with this endpoint.
        return {"user_id": None, "actor": op.actor, "agent_endpoint": op.endpoint_id}
    return {"user_id": op.user_id if op else None, "actor": op.username if op else "system"}


# The owner endpoint is an active endpoint of the team and the queue is in its scope: the write's
# guard and, when it fails, what _finish names.
OWNER_OK: LiteralString = """EXISTS (SELECT 1 FROM endpoints oe WHERE oe.id = %(endpoint_id)s
        AND oe.team_id = %(team_id)s AND oe.state = 'active')"""
QUEUE_OK: LiteralString = """EXISTS (SELECT 1 FROM endpoints qe WHERE qe.id = %(endpoint_id)s
        AND %(queue)s = ANY(qe.scope_queues))"""


def log_schedules(rows: LiteralString) -> LiteralString:
    """The change-log row of a schedule a person created, edited, paused, resumed or deleted
    (``rows``: ``team_id, endpoint_id, queue``): the relay tells the team's Schedules pages."""
    return log_change(ChangeOp.SCHEDULE, rows, team="l.team_id", endpoint="l.endpoint_id", queue="l.queue")


def _may(op: Caller, team: LiteralString, endpoint: LiteralString) -> tuple[LiteralString, LiteralString]:
    """(acts, sees): SQL predicates over the team and owner endpoint expressions for the caller.

    A person sees the schedules of their teams and acts on them with an acting role; an agent
    sees (and so acts on) only the schedules its own endpoint owns: any other schedule, its
    team's included, is not found, as another endpoint's todos are."""
    if op is None:
        return "TRUE", "TRUE"
    if isinstance(op, AgentScope):
        return "TRUE", f"{endpoint} = %(agent_endpoint)s"
    return member_of(team, roles=ACTING_ROLES), member_of(team)


NAME_TAKEN = "the team already has a schedule with this name"


def _finish(rows: list[dict], what: str) -> Schedule:
    row = rows[0]
    if row["id"] is None:
        if not row["found"]:
            raise NotFound(f"no such {what}")
        if not row["acts"]:
            raise Forbidden("your role on this team is read-only")
        if "owner_ok" in row and not row["owner_ok"]:
            raise Invalid("endpoint", "must be an active endpoint of the schedule's team")
        if "queue_ok" in row and not row["queue_ok"]:
            raise Invalid("queue", "is not in the owner endpoint's scope")
        if "name_free" in row and not row["name_free"]:
            raise Invalid("name", NAME_TAKEN)
        if row.get("name_free") and row.get("owner_ok") and row.get("queue_ok"):
            # Every check passed on the statement's snapshot, yet the INSERT's ON CONFLICT met a name
            # another create committed after it was taken: a fresh snapshot sees that schedule.
            raise StaleSnapshot("another schedule took this name while this one was created")
        raise NotFound(f"no such {what}")
    return Schedule.from_row(row)


def create(op: Caller, team_id: Any, *, now: datetime, **fields: Any) -> Statement[Schedule]:
    """A new schedule of the team. Guard: the person acts on the team; the owner endpoint is an
    active endpoint of the team with the queue in its scope; the name is free in the team (on the
    snapshot, and at the write: ON CONFLICT on the team's name writes nothing when a concurrent
    create took it, and ``_finish`` runs the statement again to answer that the name is taken).
    Effect: one ``schedules`` row, next_fire_at the first tick after ``now``. Audit:
    ``schedule.create``. An agent creates its own: its team, owned by its endpoint, whatever
    ``team_id`` and ``endpoint_id`` say."""
    if isinstance(op, AgentScope):
        team_id, fields = op.team_id, {**fields, "endpoint_id": op.endpoint_id}
    params = {"team_id": _uuid("team", team_id), **template(now=now, **fields), **_actor(op)}
    acts, sees = _may(op, "%(team_id)s", "%(endpoint_id)s")
    sql = f"""
WITH checks AS (
    SELECT EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
           AND {sees} AS found,
           {acts} AS acts,
           {OWNER_OK} AS owner_ok,
           {QUEUE_OK} AS queue_ok,
           NOT EXISTS (SELECT 1 FROM schedules WHERE team_id = %(team_id)s AND name = %(name)s) AS name_free
),
made AS (
    INSERT INTO schedules (team_id, name, cron, timezone, endpoint_id, queue, title, kind, payload, priority,
                           max_attempts, requires, missed, next_fire_at)
    SELECT %(team_id)s, %(name)s, %(cron)s, %(timezone)s, %(endpoint_id)s, %(queue)s, %(title)s, %(kind)s,
           %(payload)s, %(priority)s, %(max_attempts)s, %(requires)s, %(missed)s, %(next_fire_at)s
    FROM checks c WHERE c.found AND c.acts AND c.owner_ok AND c.queue_ok AND c.name_free
    ON CONFLICT (team_id, name) DO NOTHING
    RETURNING *
),
audit AS ({
        audit_row(
            "schedule.create",
            "made m",
            team="m.team_id",
            endpoint="m.endpoint_id",
            queue="m.queue",
            note="m.name",
            detail="jsonb_build_object('schedule', m.id, 'cron', m.cron, 'timezone', m.timezone)",
        )
    }),
logged AS ({log_schedules("made l")})
SELECT m.*, c.* FROM checks c LEFT JOIN made m ON true"""
    return Statement(sql, params, lambda rows: _finish(rows, "team"))


# The audit detail of an edit: the old and new value of each field that changed.
EDIT_DETAIL: LiteralString = """coalesce((
        SELECT jsonb_object_agg(n.key, jsonb_build_object('old', o.value, 'new', n.value))
        FROM jsonb_each(to_jsonb(m) - 'updated_at' - 'next_fire_at') n
        JOIN jsonb_each(to_jsonb(s) - 'updated_at' - 'next_fire_at') o ON o.key = n.key
        WHERE o.value IS DISTINCT FROM n.value), '{}'::jsonb) || jsonb_build_object('schedule', m.id)"""


def update(op: Caller, schedule_id: Any, *, now: datetime, **fields: Any) -> Statement[Schedule]:
    """Edit every field of a schedule; its next fire time is recomputed from ``now``. Guard and
    checks as :func:`create`, on the schedule's team. Audit: ``schedule.edit`` with the old and
    new value of each changed field. An agent edits its own schedules only, and they stay its
    own: the owner is its endpoint, whatever ``endpoint_id`` says."""
    if isinstance(op, AgentScope):
        fields = {**fields, "endpoint_id": op.endpoint_id}
    params = {"id": _uuid("schedule", schedule_id), **template(now=now, **fields), **_actor(op)}
    acts, sees = _may(op, "s.team_id", "s.endpoint_id")
    sql = f"""
WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT s.team_id,
           {sees} AS found,
           {acts} AS acts,
           EXISTS (SELECT 1 FROM endpoints oe WHERE oe.id = %(endpoint_id)s AND oe.team_id = s.team_id
                   AND oe.state = 'active') AS owner_ok,
           {QUEUE_OK} AS queue_ok,
           NOT EXISTS (SELECT 1 FROM schedules o WHERE o.team_id = s.team_id AND o.name = %(name)s
                       AND o.id <> s.id) AS name_free
    FROM s
),
made AS (
    UPDATE schedules u SET name = %(name)s, cron = %(cron)s, timezone = %(timezone)s,
           endpoint_id = %(endpoint_id)s, queue = %(queue)s, title = %(title)s, kind = %(kind)s,
           payload = %(payload)s, priority = %(priority)s, max_attempts = %(max_attempts)s,
           requires = %(requires)s, missed = %(missed)s, next_fire_at = %(next_fire_at)s, updated_at = now()
    FROM checks c WHERE u.id = %(id)s AND c.found AND c.acts AND c.owner_ok AND c.queue_ok AND c.name_free
    RETURNING u.*
),
audit AS ({
        audit_row(
            "schedule.edit",
            "made m JOIN s ON s.id = m.id",
            team="m.team_id",
            endpoint="m.endpoint_id",
            queue="m.queue",
            note="m.name",
            detail=EDIT_DETAIL,
        )
    }),
logged AS ({log_schedules("made l")})
SELECT m.*, coalesce(c.found, false) AS found, c.acts, c.owner_ok, c.queue_ok, c.name_free
FROM (SELECT 1) one LEFT JOIN checks c ON true LEFT JOIN made m ON true"""
    return Statement(sql, params, lambda rows: _finish(rows, "schedule"))


def set_paused(op: Caller, schedule_id: Any, paused: bool, *, now: datetime) -> Statement[Schedule]:
    """Pause or resume. A resumed schedule's ``next_fire_at`` becomes ``now``, a lower bound the
    next sweep aligns to the first tick at or after it (``schedule_times.plan``): what it would
    have fired while paused is not fired (pausing means "don't run"). Audit: ``schedule.pause`` or
    ``schedule.resume``."""
    params = {"id": _uuid("schedule", schedule_id), "paused": bool(paused), **_actor(op)}
    acts, sees = _may(op, "s.team_id", "s.endpoint_id")
    return _flag(params, acts, sees, now, "schedule.pause" if paused else "schedule.resume")


SCHEDULE_DETAIL: LiteralString = "jsonb_build_object('schedule', m.id)"


def _flag(params: dict, acts: LiteralString, sees: LiteralString, now: datetime, action: LiteralString):
    sql = f"""
WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT {sees} AS found,
           {acts} AS acts
    FROM s
),
made AS (
    UPDATE schedules u SET paused = %(paused)s, updated_at = now(),
           next_fire_at = CASE WHEN u.paused AND NOT %(paused)s THEN %(now)s::timestamptz ELSE u.next_fire_at END
    FROM checks c WHERE u.id = %(id)s AND c.found AND c.acts AND u.paused IS DISTINCT FROM %(paused)s
    RETURNING u.*
),
audit AS ({audit_row(action, "made m", team="m.team_id", note="m.name", detail=SCHEDULE_DETAIL)}),
logged AS ({log_schedules("made l")})
SELECT coalesce(m.id, s.id) AS id, coalesce(c.found, false) AS found, c.acts,
       (SELECT to_jsonb(x) FROM (SELECT * FROM made) x) AS made, to_jsonb(s) AS was
FROM (SELECT 1) one LEFT JOIN s ON true LEFT JOIN checks c ON true LEFT JOIN made m ON true"""
    params = {**params, "now": now}

    def finish(rows: list[dict]) -> Schedule:
        row = rows[0]
        if row["id"] is None or not row["found"]:
            raise NotFound("no such schedule")
        if not row["acts"]:
            raise Forbidden("your role on this team is read-only")
        return _schedule_from_json(row["made"] or row["was"])

    return Statement(sql, params, finish)


def _schedule_from_json(doc: dict) -> Schedule:
    values = dict(doc)
    for name in ("id", "team_id", "endpoint_id"):
        values[name] = UUID(values[name])
    for name in ("next_fire_at", "created_at", "updated_at"):
        values[name] = datetime.fromisoformat(values[name])
    return Schedule.from_row(values)


def delete(op: Caller, schedule_id: Any) -> Statement[str]:
    """Delete a schedule and its fire records (its todos stay). Audit: ``schedule.delete``."""
    params = {"id": _uuid("schedule", schedule_id), **_actor(op)}
    acts, sees = _may(op, "s.team_id", "s.endpoint_id")
    sql = f"""
WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT {sees} AS found,
           {acts} AS acts
    FROM s
),
gone AS (
    DELETE FROM schedules d USING checks c WHERE d.id = %(id)s AND c.found AND c.acts
    RETURNING d.id, d.team_id, d.name, d.endpoint_id, d.queue
),
audit AS ({
        audit_row(
            "schedule.delete",
            "gone g",
            team="g.team_id",
            endpoint="g.endpoint_id",
            queue="g.queue",
            note="g.name",
            detail="jsonb_build_object('schedule', g.id)",
        )
    }),
logged AS ({log_schedules("gone l")})
SELECT g.name, coalesce(c.found, false) AS found, c.acts
FROM (SELECT 1) one LEFT JOIN checks c ON true LEFT JOIN gone g ON true"""

    def finish(rows: list[dict]) -> str:
        row = rows[0]
        if not row["found"]:
            raise NotFound("no such schedule")
        if row["name"] is None:
            raise Forbidden("your role on this team is read-only")
        return row["name"]

    return Statement(sql, params, finish)


# --- firing -----------------------------------------------------------------------------------

# A fired tick's todo: the schedule's template on its owner endpoint and queue, keyed by the tick.
TICK_KEY: LiteralString = """'schedule:' || s.id || ':'
        || to_char(f.tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""


def _fire_sql(ticks: LiteralString, extra: LiteralString) -> LiteralString:
    """Record the ticks of CTE ``ticks`` (schedule_id, tick, how, missed) and create their todos.

    ``schedule_fires``' primary key admits each (schedule, tick) once: a tick already recorded is
    skipped with its todo (ON CONFLICT DO NOTHING feeds nothing to the todo INSERT). A schedule
    whose owner endpoint is no longer active fires nothing.
    """
    return f"""
fired AS (
    INSERT INTO schedule_fires (schedule_id, tick, todo_id, how, missed)
    SELECT f.schedule_id, f.tick, 'td_' || replace(gen_random_uuid()::text, '-', ''), f.how, f.missed
    FROM {ticks} f JOIN schedules s ON s.id = f.schedule_id
    JOIN endpoints e ON e.id = s.endpoint_id AND e.state = 'active'
    ON CONFLICT (schedule_id, tick) DO NOTHING
    RETURNING schedule_id, tick, todo_id, how
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key, priority, max_attempts,
                       requires)
    SELECT f.todo_id, s.endpoint_id, s.queue, 'schedule', s.kind, s.title, s.payload, {TICK_KEY},
           s.priority, s.max_attempts, s.requires
    FROM fired f JOIN schedules s ON s.id = f.schedule_id
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE {DEDUPE_PREDICATE}
    DO NOTHING
    RETURNING *
),
logged AS ({log_todos(ChangeOp.CREATE, "ins", before=None)}){extra}
SELECT f.schedule_id, f.tick, i.id AS todo_id, f.how,
       {notify_ready("ins")} AS notified"""


def _fires(rows: list[dict]) -> list[Fired]:
    return [Fired(r["schedule_id"], r["tick"], r["todo_id"], r["how"]) for r in rows]


def lock_due(limit: int = SWEEP_LIMIT) -> Statement[list[dict]]:
    """The loop's first statement (inside :func:`fire_due`'s transaction): due, running schedules,
    oldest tick first, locked ``FOR UPDATE SKIP LOCKED`` so concurrent sweeps take different ones
    and a schedule being edited, paused or deleted is left to the next sweep."""
    sql: LiteralString = """
SELECT s.id, s.cron, s.timezone, s.missed, s.next_fire_at, clock_timestamp() AS now
FROM schedules s
WHERE NOT s.paused AND s.next_fire_at <= clock_timestamp()
ORDER BY s.next_fire_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED"""
    return Statement(sql, {"limit": limit}, lambda rows: rows)


def fire(
    ids: list[UUID], next_fire_at: list[datetime], ticks: list[tuple[UUID, datetime, str, int]]
) -> Statement[list[Fired]]:
    """The loop's second statement: move each locked schedule's ``next_fire_at`` on, record and
    create the todo of each tick it fires. Guard: the caller holds the schedules' row locks
    (:func:`lock_due`). Log: each todo created (none → pending); agents waiting are woken."""
    params = {
        "ids": ids,
        "nexts": next_fire_at,
        "fire_ids": [t[0] for t in ticks],
        "ticks": [t[1] for t in ticks],
        "hows": [t[2] for t in ticks],
        "misses": [t[3] for t in ticks],
    }
    sql = f"""
WITH moved AS (
    UPDATE schedules s SET next_fire_at = m.next_fire_at
    FROM unnest(%(ids)s::uuid[], %(nexts)s::timestamptz[]) AS m(id, next_fire_at)
    WHERE s.id = m.id
    RETURNING s.id
),
due AS (
    SELECT * FROM unnest(%(fire_ids)s::uuid[], %(ticks)s::timestamptz[], %(hows)s::text[], %(misses)s::int[])
        AS d(schedule_id, tick, how, missed)
),{_fire_sql("due", "")}
FROM fired f LEFT JOIN ins i ON i.id = f.todo_id"""
    return Statement(sql, params, _fires)


def fire_now(op: Caller, schedule_id: Any) -> Statement[Fired]:
    """Fire a schedule once, now, outside its timetable (its next tick is unchanged; a paused
    schedule fires too: someone asked). Guard: the person acts on the team; an agent, on its own
    schedule; the schedule row, locked ``FOR KEY SHARE`` so a concurrent delete either waits for
    this fire (and then deletes its record with the schedule) or, committed first, leaves no row
    and the fire answers not found. Audit: ``schedule.fire`` with the todo. Returns the schedule
    as fired: a caller answers from it, not from a read after the commit that a delete may beat."""
    params = {"id": _uuid("schedule", schedule_id), **_actor(op)}
    acts, sees = _may(op, "s.team_id", "s.endpoint_id")
    extra = f""",
audit AS ({
        audit_row(
            "schedule.fire",
            "fired f JOIN schedules s ON s.id = f.schedule_id",
            team="s.team_id",
            todo="f.todo_id",
            endpoint="s.endpoint_id",
            queue="s.queue",
            note="s.name",
            detail="jsonb_build_object('schedule', s.id)",
        )
    })"""
    sql = f"""
WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR KEY SHARE),
checks AS (
    SELECT s.id,
           {sees} AS found,
           {acts} AS acts,
           EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.endpoint_id AND e.state = 'active') AS owner_ok
    FROM s
),
manual AS (
    SELECT c.id AS schedule_id, clock_timestamp() AS tick, 'manual'::text AS how, 0 AS missed
    FROM checks c WHERE c.found AND c.acts
),{_fire_sql("manual", extra)},
       (SELECT found FROM checks) AS found, (SELECT acts FROM checks) AS acts,
       (SELECT owner_ok FROM checks) AS owner_ok, (SELECT to_jsonb(s) FROM s) AS schedule
FROM (SELECT 1) one LEFT JOIN (fired f LEFT JOIN ins i ON i.id = f.todo_id) ON true"""

    def finish(rows: list[dict]) -> Fired:
        row = rows[0]
        if not row["found"]:
            raise NotFound("no such schedule")
        if not row["acts"]:
            raise Forbidden("your role on this team is read-only")
        if row["schedule_id"] is None or not row["owner_ok"]:
            raise Invalid("endpoint", "the schedule's owner endpoint is revoked: it cannot fire")
        schedule = _schedule_from_json(row["schedule"])
        return Fired(row["schedule_id"], row["tick"], row["todo_id"], row["how"], schedule)

    return Statement(sql, params, finish)


def fire_due(limit: int = SWEEP_LIMIT) -> list[Fired]:
    """One sweep: fire every due tick of up to ``limit`` schedules, in one transaction.

    The row locks of :func:`lock_due` are held until COMMIT, across the planning in Python and
    :func:`fire`; nothing is visible to another process before COMMIT, and after it the
    schedules' ``next_fire_at`` has moved past what was fired. Returns what fired (a schedule
    that only skipped missed ticks returns nothing but is moved on all the same).
    """
    with pooled_connection() as conn, conn.transaction():
        stmt = lock_due(limit)
        rows = stmt.finish(conn.execute(stmt.sql, stmt.params).fetchall())
        if not rows:
            return []
        ids, nexts, ticks = [], [], []
        for row in rows:
            planned = schedule_times.plan(row["cron"], row["timezone"], row["next_fire_at"], row["now"], row["missed"])
            ids.append(row["id"])
            nexts.append(planned.next_fire_at)
            ticks.extend((row["id"], f.tick, f.how, f.missed) for f in planned.fires)
        stmt2 = fire(ids, nexts, ticks)
        return stmt2.finish(conn.execute(stmt2.sql, stmt2.params).fetchall())

"""Operator transitions on waiting work: run a scheduled todo now, reschedule it, or edit it
before it runs. The peers' most requested dashboard action after search and bulk.

Each is one statement over one todo, scoped like every operator statement (``human.py``): it
locks the row (``prior``), reads the old values there, updates it under the same guard, and
writes the audit row with the old and the new values of what changed, the change-log row (so the
Board updates live) and, when the todo became claimable now, the ``board_ready`` NOTIFY that
wakes long-polling agents.

The time a todo waits for is ``next_retry_at`` — the same column, and the same ``<= now()``
predicate in the claim, as a failed todo's retry window (docs/lifecycle.md, "Run later").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, LiteralString

from todos.core import compose
from todos.core.db import Statement
from todos.core.errors import Conflict, Invalid
from todos.core.store import inputs
from todos.core.store.fragments import (
    INFINITY,
    OPERATOR_ACTS,
    audit_row,
    board_state,
    log_todos,
    not_blocked,
    notify_ready,
    operator_miss,
)
from todos.core.store.human import RUN_NOW_GUARD, _params, _prior, _raise_miss
from todos.core.store.records import TODO_COLUMNS, BulkOutcome, Todo
from todos.core.store.scopes import OperatorScope
from todos.core.words import ChangeOp, TodoState

# What an operator may edit on waiting work, each with the SET expression that writes it. A time
# already reached is stored as "no time" (claimable now), as on create.
EDITABLE: dict[str, LiteralString] = {
    "title": "title = %(title)s",
    "payload": "payload = %(payload)s",
    "priority": "priority = %(priority)s",
    "max_attempts": "max_attempts = %(max_attempts)s",
    "assignee": "assignee = %(assignee)s",
    "requires": "requires = %(requires)s",
    "run_at": "next_retry_at = CASE WHEN %(run_at)s::timestamptz > now() THEN %(run_at)s::timestamptz END",
}
# Each field's value in the audit row, over a todo row alias: the payload as JSON, the time as
# ``run_at`` (the name the API and the Board use for it).
AUDITED: dict[LiteralString, Callable[[LiteralString], LiteralString]] = {
    "title": lambda r: f"to_jsonb({r}.title)",
    "payload": lambda r: f"{r}.payload",
    "priority": lambda r: f"to_jsonb({r}.priority)",
    "max_attempts": lambda r: f"to_jsonb({r}.max_attempts)",
    "assignee": lambda r: f"to_jsonb({r}.assignee)",
    "requires": lambda r: f"to_jsonb({r}.requires)",
    "run_at": lambda r: f"to_jsonb({r}.next_retry_at)",
}
# One field a line, in the SET list and in the audit's objects.
FIELD_BREAK: LiteralString = ",\n        "
# A blocked todo is not "waiting" for these edits: its time is its parents' (docs/lifecycle.md,
# "Dependencies"); run anyway is what unblocks it.
WAITING: LiteralString = f"t.state = {TodoState.PENDING.sql} AND {not_blocked()}"
SCHEDULED: LiteralString = f"t.state = {TodoState.PENDING.sql} AND t.next_retry_at < {INFINITY}"


def _audited(fields: list[str], row: LiteralString) -> LiteralString:
    """``jsonb_build_object('title', to_jsonb(<row>.title), …)`` for ``fields``."""
    parts: list[LiteralString] = [f"'{name}', {value(row)}" for name, value in AUDITED.items() if name in fields]
    return f"jsonb_build_object({compose.join(FIELD_BREAK, parts)})"


def _waiting_statement(
    verb: ChangeOp,
    action: LiteralString,
    fields: list[str],
    guard: LiteralString,
    params: dict,
    conflict_hint: str,
) -> Statement[Todo]:
    """Update ``fields`` of one waiting todo under ``guard``; audit old and new values."""
    sets = compose.join(FIELD_BREAK, (EDITABLE[name] for name in EDITABLE if name in fields))
    old = _audited(fields, "p")
    new = _audited(fields, "u")
    sql = f"""
WITH {_prior("t.id = %(id)s", guard)},
old AS (
    SELECT p.id, {old} AS vals
    FROM todos p JOIN prior ON prior.id = p.id
),
upd AS (
    UPDATE todos t SET {sets}{FIELD_BREAK}updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND {guard}
    RETURNING t.*, p.state_before
),
changed AS (
    -- the audit keeps the fields whose value changed, each with its old and new value
    SELECT u.id,
           coalesce(jsonb_object_agg(o.key, o.value) FILTER (WHERE o.value IS DISTINCT FROM n.value), '{{}}') AS old,
           coalesce(jsonb_object_agg(n.key, n.value) FILTER (WHERE o.value IS DISTINCT FROM n.value), '{{}}') AS new
    FROM upd u JOIN old ON old.id = u.id
    CROSS JOIN LATERAL jsonb_each(old.vals) o
    JOIN LATERAL jsonb_each({new}) n ON n.key = o.key
    GROUP BY u.id
),
audit AS ({
        audit_row(
            action,
            "upd u JOIN endpoints ae ON ae.id = u.endpoint_id JOIN changed c ON c.id = u.id",
            team="ae.team_id",
            todo="u.id",
            endpoint="u.endpoint_id",
            queue="u.queue",
            note="%(note)s",
            detail="jsonb_build_object('old', c.old, 'new', c.new)",
        )
    }),
logged AS ({log_todos(verb, "upd", before="r.state_before")}),
result AS (
    SELECT {TODO_COLUMNS},
           {notify_ready("upd", "next_retry_at IS NULL")} AS notified
    FROM upd
)
SELECT r.*, {operator_miss()} AS miss FROM (SELECT 1) one LEFT JOIN result r ON true"""

    def finish(rows: list[dict]) -> Todo:
        row = rows[0]
        if row["id"] is None:
            if row["miss"] == "conflict":
                raise Conflict(f"the todo changed: {conflict_hint}: {params['id']}")
            _raise_miss(row, verb, params["id"])
        return Todo.from_row(row)

    return Statement(sql, params, finish)


def run_now(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Make a scheduled todo claimable now.

    Guard: pending with a time (scheduled). Effect: the time cleared. Attempt rows: none.
    Log: ``scheduled`` → ``pending``; waiting agents are woken. Audit: the old and new ``run_at``.
    """
    params = _params(op, todo_id, note=note)
    params["run_at"] = None
    return _waiting_statement(
        ChangeOp.RUN_NOW, "todo.run_now", ["run_at"], SCHEDULED, params, "only a scheduled todo can be run now"
    )


def run_now_many(op: OperatorScope, ids: Any, *, note: Any = None) -> Statement[BulkOutcome]:
    """Bulk run now (a bulk job's chunk, the Board's Scheduled tab): make each scheduled todo of
    ``ids`` claimable now, in one statement.

    Guard, per row: still pending, its time still to come, on an endpoint of a team where the
    person acts (``OPERATOR_ACTS``); a row that moved (claimed, canceled, its time reached, run
    already) is skipped and reported, never an error. Effect: the time cleared. Attempt rows:
    none (no lease starts or ends). Log: ``scheduled`` → ``pending``; waiting agents are woken.
    Audit: one ``todo.run_now`` row per todo run, with its old and new ``run_at``.
    """
    todo_ids = inputs.todo_ids(ids)
    if len(todo_ids) > BULK_MAX_IDS:
        raise Invalid("ids", f"at most {BULK_MAX_IDS} ids per statement")
    params = _params(op, note=note)
    params["ids"] = todo_ids
    sql = f"""
WITH prior AS (
    SELECT t.id, {board_state("t")} AS state_before, t.next_retry_at AS run_at_before
    FROM todos t
    WHERE t.id = ANY(%(ids)s::text[]) AND {OPERATOR_ACTS}
      AND {RUN_NOW_GUARD} ORDER BY t.id
    FOR UPDATE
),
upd AS (
    UPDATE todos t SET next_retry_at = NULL, updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND {RUN_NOW_GUARD}
    RETURNING t.*, p.state_before, p.run_at_before
),
audit AS ({
        audit_row(
            "todo.run_now",
            "upd u JOIN endpoints ae ON ae.id = u.endpoint_id",
            team="ae.team_id",
            todo="u.id",
            endpoint="u.endpoint_id",
            queue="u.queue",
            note="%(note)s",
            detail=RUN_NOW_DETAIL,
        )
    }),
logged AS ({log_todos(ChangeOp.RUN_NOW, "upd", before="r.state_before")}),
woken AS (
    SELECT {notify_ready("upd")} AS n
)
SELECT u.id, (SELECT n FROM woken) AS notified FROM upd u"""

    return Statement(sql, params, BulkOutcome.reader(todo_ids))


BULK_MAX_IDS = 1000
# A bulk run now's audit detail: the same shape as one run now's (the changed field, old and new).
RUN_NOW_DETAIL: LiteralString = """jsonb_build_object(
                'old', jsonb_build_object('run_at', to_jsonb(u.run_at_before)),
                'new', jsonb_build_object('run_at', NULL::jsonb))"""


def reschedule(
    op: OperatorScope, todo_id: Any, *, run_at: Any = None, delay_seconds: Any = None, note: Any = None
) -> Statement[Todo]:
    """Set the time a pending todo waits for (``run_at`` or ``delay_seconds``; neither: now).

    Guard: pending (scheduled or not). Effect: ``next_retry_at`` set (or cleared when reached).
    Log: ``pending``/``scheduled`` → ``scheduled``/``pending``. Audit: the old and new ``run_at``.
    """
    params = _params(op, todo_id, note=note)
    params["run_at"] = inputs.not_before(run_at, delay_seconds)
    return _waiting_statement(
        ChangeOp.RESCHEDULE, "todo.reschedule", ["run_at"], WAITING, params, "only a pending todo can be rescheduled"
    )


def edit(op: OperatorScope, todo_id: Any, changes: Any, *, note: Any = None) -> Statement[Todo]:
    """Edit a todo before it runs: any of ``title``, ``payload``, ``priority``, ``max_attempts``,
    ``assignee`` (``human:<id>``, ``endpoint:<uuid>`` or empty), ``requires`` (capability
    labels; empty: none), ``run_at`` (RFC 3339, or empty
    for now). Only the fields in ``changes`` change.

    Guard: pending (scheduled or not): once claimed, the worker holds what it read. Attempt rows:
    none. Log: the Board state around the change. Audit: old and new values of the changed fields.
    """
    if not isinstance(changes, dict) or not changes:
        raise Invalid("changes", f"must name at least one of {', '.join(EDITABLE)}")
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise Invalid(unknown[0], f"cannot be edited (editable: {', '.join(EDITABLE)})")
    params = _params(op, todo_id, note=note)
    if "title" in changes:
        params["title"] = inputs.title(changes["title"])
    if "payload" in changes:
        params["payload"] = inputs.json_value("payload", changes["payload"])
    if "priority" in changes:
        params["priority"] = inputs.require_int("priority", changes["priority"], *inputs.PRIORITY_RANGE)
    if "max_attempts" in changes:
        params["max_attempts"] = inputs.require_int("max_attempts", changes["max_attempts"], *inputs.MAX_ATTEMPTS_RANGE)
    if "assignee" in changes:
        value = inputs.label("assignee", changes["assignee"])
        if value is not None and not (value.startswith("human:") or value.startswith("endpoint:")):
            raise Invalid("assignee", "must be human:<user id> or endpoint:<endpoint id>")
        params["assignee"] = value
    if "requires" in changes:
        params["requires"] = inputs.capability_labels("requires", changes["requires"])
    if "run_at" in changes:
        raw = changes["run_at"]
        params["run_at"] = None if raw in (None, "") else inputs.run_at(raw)
    fields = [name for name in EDITABLE if name in changes]
    return _waiting_statement(ChangeOp.EDIT, "todo.edit", fields, WAITING, params, "only a pending todo can be edited")

"""Operator (Board) transitions: what a signed-in human can do to their teams' todos.

The agent statements' twins, scoped by ``operatorOwns`` (membership of the owning team, with the
``operator`` or ``admin`` role to act) instead of ``endpoint_id``, and without the lease-token
fence: the owning human can always recover a stuck attempt. A human's lease is owned by
``human:<user id>`` and its attempt has ``claimer_kind = 'owner'``.

Every statement also writes its audit row and its change-log row, so the trail and the Board hold
exactly the changes that committed. The rows a statement changes are locked first (``_prior``) to
read their Board state before the change, which the log records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, LiteralString
from uuid import UUID

from django.conf import settings
from psycopg.types.json import Jsonb

from todos.core.db import Statement
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound, StaleSnapshot
from todos.core.store import dependencies, inputs
from todos.core.store.agent import DEDUPE_PREDICATE
from todos.core.store.claims import claim_sql, claims_from_rows
from todos.core.store.fragments import (
    ACTING_ROLES,
    BACKOFF,
    CLAIMABLE,
    INFINITY,
    LEASE_SEEN,
    OPERATOR_ACTS,
    audit_row,
    audit_todos,
    blocked,
    board_state,
    children_done,
    children_failed,
    children_woken,
    log_change,
    log_todos,
    member_of,
    notify_ready,
    operator_miss,
    ready_message,
    search_document,
    stored_reason_group,
)
from todos.core.store.records import TODO_COLUMNS, BulkOutcome, Claim, Created, Todo
from todos.core.store.scopes import OperatorScope
from todos.core.words import ChangeOp, TodoState

MISSES = {"not_found": NotFound, "forbidden": Forbidden, "conflict": Conflict}
MISS_MESSAGES = {
    "not_found": "no such todo",
    "forbidden": "your role on this team is read-only",
    "conflict": "the todo changed: it is no longer in a state you can {verb}",
}
HUMAN_TTL_RANGE = (60, 86400)


_NO_TODO = object()  # statements on no single todo (bulk, create, pauses)


def _params(
    op: OperatorScope,
    todo_id: Any = _NO_TODO,
    *,
    note: Any = None,
    detail: dict | None = None,
    note_max_chars: int = 2000,
) -> dict:
    text = inputs.note(note, max_chars=note_max_chars)
    # The note doubles as the summary of the attempt a human's report closes: a note is bounded in
    # characters, a summary in bytes (2048), so it is cut like any summary.
    summary, truncated = inputs.summary(text)
    params = {
        "user_id": op.user_id,
        "actor": op.username,
        "owner": op.owner,
        "note": text,
        "summary": summary,
        "summary_truncated": truncated,
        "detail": Jsonb(detail) if detail else None,
    }
    if todo_id is not _NO_TODO:
        params["id"] = inputs.todo_id(todo_id)
    return params


def _human_ttl(value: Any) -> int:
    if value is None:
        return settings.BOARD_HUMAN_LEASE_SECONDS
    return inputs.require_int("lease_ttl_seconds", value, *HUMAN_TTL_RANGE)


def _raise_miss(row: dict, verb: str, todo_id: str) -> None:
    miss = row["miss"]
    raise MISSES[miss](f"{MISS_MESSAGES[miss].format(verb=verb)}: {todo_id}")


# The rows a human's statement changes, locked, with their Board state before the change (the
# UPDATE's RETURNING sees only the new row). The lock is taken here, so the UPDATE below finds
# the row as this CTE read it; its guard is written again there all the same, and a row whose
# state moved while this statement waited for the lock is re-checked by PostgreSQL and left out.
def _prior(where: LiteralString, guard: LiteralString, *, order: bool = False) -> LiteralString:
    order_by = " ORDER BY t.id" if order else ""  # several rows: one lock order, no deadlock
    return f"""prior AS (
    SELECT t.id, {board_state("t")} AS state_before FROM todos t
    WHERE {where} AND {OPERATOR_ACTS}
      AND {guard}{order_by}
    FOR UPDATE
)"""


def _single(
    verb: ChangeOp,
    action: LiteralString,
    set_todo: LiteralString,
    guard: LiteralString,
    params: dict,
    *,
    attempt_set: LiteralString | None = None,
    ready_when: LiteralString | None = None,
    finished: LiteralString | None = None,
    done: bool = True,
) -> Statement[Todo]:
    """One todo, one statement: update it, update its open attempt (close it, or stamp a
    heartbeat) when ``attempt_set`` is given, write the audit row and the change-log row, and wake
    waiting agents when ``ready_when`` says the todo became claimable. ``finished`` (a FROM clause
    over ``upd``): the todo finished, and its children are settled (``children_done`` or ``children_failed``)."""
    attempt = (
        f"""
open_attempt AS (
    UPDATE todo_attempts a SET {attempt_set}
    FROM upd u
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),"""
        if attempt_set
        else ""
    )
    ready = notify_ready("upd", ready_when) if ready_when else "0"
    children, woken = _children(finished, done)
    sql = f"""
WITH {_prior("t.id = %(id)s", guard)},
upd AS (
    UPDATE todos t SET {set_todo}, updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND {guard}
    RETURNING t.*, p.state_before
),{attempt}
audit AS ({audit_todos(action, "upd")}),
logged AS ({log_todos(verb, "upd", before="r.state_before")}){children},
result AS (
    SELECT {TODO_COLUMNS},
           {ready} AS notified{woken}
    FROM upd
)
SELECT r.*, {operator_miss()} AS miss FROM (SELECT 1) one LEFT JOIN result r ON true"""

    def finish(rows: list[dict]) -> Todo:
        if rows[0]["id"] is None:
            _raise_miss(rows[0], verb.replace("_", " "), params["id"])
        return Todo.from_row(rows[0])

    return Statement(sql, params, finish)


def _children(finished: LiteralString | None, done: bool) -> tuple[LiteralString, LiteralString]:
    """The CTEs that settle the children of the todos a statement finished, and the answer's
    column that wakes agents for the unblocked ones (docs/lifecycle.md, "Dependencies")."""
    if finished is None:
        return "", ""
    if done:
        return "", f",\n           {children_done(finished)} AS woken"
    return f",\n{children_failed(finished)}", f",\n           {children_woken()} AS woken"


HOLDS: LiteralString = f"t.state = {TodoState.CLAIMED.sql} AND t.owner = %(owner)s AND {LEASE_SEEN}"
HUMAN_REPORT: LiteralString = f"""summary = %(summary)s, summary_truncated = %(summary_truncated)s,
            {search_document("a.error", "%(summary)s::attempt_summary")}"""


def claim(op: OperatorScope, todo_id: Any, *, lease_ttl_seconds: Any = None) -> Statement[Claim]:
    """A human takes the lease (``human:<id>``, default 30 minutes).

    Guard: claimable, assignee empty or this human; a paused queue does not stop a human; waits
    on the row lock. Attempt rows: as an agent's claim, with ``claimer_kind = 'owner'``.
    """
    params = _params(op, todo_id)
    params.update(
        ttl=_human_ttl(lease_ttl_seconds),
        claimant=inputs.claimant(f"Board · {op.username}"),
        claimer_kind="owner",
        claimer_endpoint_id=None,
        session=None,
        token_hashes=[],
        cap=settings.BOARD_ATTEMPTS_CAP,
    )
    cand = f"""
cand AS (
    SELECT t.id, t.state AS prior_state, t.next_retry_at AS prior_not_before, t.claimed_at AS prior_claimed_at,
           t.concurrency_key, t.rate_key, 1 AS ord,
           (SELECT ce.team_id FROM endpoints ce WHERE ce.id = t.endpoint_id) AS team_id, t.endpoint_id, t.queue
    FROM todos t
    WHERE t.id = %(id)s AND {OPERATOR_ACTS} AND {CLAIMABLE}
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
    FOR UPDATE
),
audit AS ({audit_todos("todo.claim", "cand")})"""
    sql = claim_sql(cand, with_prior=False, miss=operator_miss())

    def finish(rows: list[dict]) -> Claim:
        if rows[0]["id"] is None:
            _raise_miss(rows[0], "claim", params["id"])
        return claims_from_rows(rows, [])[0]

    return Statement(sql, params, finish)


def extend(op: OperatorScope, todo_id: Any, *, lease_ttl_seconds: Any = None) -> Statement[Todo]:
    """Extend a human's own lease. Guard: claimed by this human.
    Attempt row: stamps ``last_heartbeat_at`` and the new ``lease_expires_at``."""
    params = _params(op, todo_id)
    params["ttl"] = _human_ttl(lease_ttl_seconds)
    return _single(
        ChangeOp.HEARTBEAT,
        "todo.extend",
        "lease_expires_at = now() + make_interval(secs => %(ttl)s)",
        HOLDS,
        params,
        attempt_set="last_heartbeat_at = now(), lease_expires_at = u.lease_expires_at",
    )


def complete(op: OperatorScope, todo_id: Any, *, note: Any = None, result: Any = None) -> Statement[Todo]:
    """Finish a todo the human holds. Guard: claimed by this human.
    Effect: ``done`` with the optional JSON result. Attempt: ``completed``/``done``, note as summary."""
    params = _params(op, todo_id, note=note)
    params["result"] = inputs.json_value("result", result)
    return _single(
        ChangeOp.COMPLETE,
        "todo.complete",
        f"""state = {TodoState.DONE.sql}, result = %(result)s, owner = NULL, lease_expires_at = NULL,
            completed_at = now()""",
        HOLDS,
        params,
        attempt_set=f"""ended_at = now(), outcome = 'completed', disposition = 'done',
            {HUMAN_REPORT}""",
        finished="upd",
    )


def fail(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Report failure on a todo the human holds. Guard: claimed by this human.
    Effect and attempt: as an agent's fail (backoff retry below the cap, else dead letter)."""
    params = _params(op, todo_id, note=note)
    params["result"] = Jsonb({"error": "failed_by_operator", "note": params["note"]})
    return _single(
        ChangeOp.FAIL,
        "todo.fail",
        f"""state = {TodoState.FAILED.sql}, result = %(result)s, owner = NULL, lease_expires_at = NULL,
            {stored_reason_group("NULL", "%(summary)s::text", "%(result)s::jsonb->>'error'")},
            next_retry_at = CASE WHEN t.attempt < t.max_attempts
                THEN now() + {BACKOFF} END,
            completed_at = CASE WHEN t.attempt < t.max_attempts THEN NULL ELSE now() END""",
        HOLDS,
        params,
        attempt_set=f"""ended_at = now(), outcome = 'failed',
            disposition = CASE WHEN u.next_retry_at IS NULL THEN 'dead_lettered' ELSE 'retry_scheduled' END,
            {HUMAN_REPORT}""",
        finished="(SELECT id FROM upd WHERE next_retry_at IS NULL)",
        done=False,
    )


def release(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Give back a lease the human holds. Guard: claimed by this human.
    Effect: ``pending``, ``attempt`` unchanged. Attempt: ``released``/``requeued``."""
    params = _params(op, todo_id, note=note)
    return _single(
        ChangeOp.RELEASE,
        "todo.release",
        f"state = {TodoState.PENDING.sql}, owner = NULL, lease_expires_at = NULL",
        HOLDS,
        params,
        attempt_set=f"""ended_at = now(), outcome = 'released', disposition = 'requeued',
            {HUMAN_REPORT}""",
        ready_when="TRUE",
    )


def force_release(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Take a lease away from whoever holds it (an agent that is stuck). Guard: claimed.
    Effect: ``pending``. Attempt: ``released``/``requeued`` with ``ended_by`` the human (0009), so
    it does not read like the holder's own release; the audit names the human too."""
    params = _params(op, todo_id, note=note)
    return _single(
        ChangeOp.FORCE_RELEASE,
        "todo.force_release",
        f"state = {TodoState.PENDING.sql}, owner = NULL, lease_expires_at = NULL",
        f"t.state = {TodoState.CLAIMED.sql} AND {LEASE_SEEN}",
        params,
        attempt_set="ended_at = now(), outcome = 'released', disposition = 'requeued', ended_by = %(owner)s",
        ready_when="TRUE",
    )


RETRY_SET: LiteralString = f"""state = {TodoState.PENDING.sql}, attempt = 0, result = NULL, owner = NULL,
    lease_expires_at = NULL, claimed_at = NULL, completed_at = NULL, next_retry_at = NULL,
    parents_left = 0, run_at_after_block = NULL"""
# A dead letter gave up its idempotency key (docs/lifecycle.md, "Idempotency keys"). If a newer live
# todo holds the key now, bringing the dead letter back would put two live todos on one key: the
# retry is refused (a conflict; bulk retries skip it) instead of failing on the unique index.
RETRY_GUARD: LiteralString = f"""t.state = {TodoState.FAILED.sql} AND (
    t.idempotency_key IS NULL OR t.next_retry_at IS NOT NULL OR NOT EXISTS (
    SELECT 1 FROM todos k
    WHERE k.endpoint_id = t.endpoint_id AND k.idempotency_key = t.idempotency_key AND k.id <> t.id
      AND k.state <> {TodoState.DONE.sql}
      AND (k.state <> {TodoState.FAILED.sql} OR k.next_retry_at IS NOT NULL)))"""
CANCEL_SET: LiteralString = f"""state = {TodoState.CANCELED.sql}, owner = NULL, lease_expires_at = NULL,
    next_retry_at = NULL, completed_at = now()"""
CANCEL_GUARD: LiteralString = (
    f"(t.state IN ({TodoState.PENDING.sql}, {TodoState.FAILED.sql})"
    f" OR (t.state = {TodoState.CLAIMED.sql} AND {LEASE_SEEN}))"
)
CANCEL_ATTEMPT: LiteralString = "ended_at = now(), outcome = 'canceled', disposition = 'canceled'"
# Run now in bulk (``waiting.run_now_many``): still pending and still waiting for a time to come.
RUN_NOW_GUARD: LiteralString = (
    f"t.state = {TodoState.PENDING.sql} AND t.next_retry_at > now() AND t.next_retry_at < {INFINITY}"
)
# What each bulk action can change: the Board's previews count with these same guards.
BULK_GUARDS: dict[str, LiteralString] = {
    "retry": RETRY_GUARD,
    "cancel": CANCEL_GUARD,
    "run_now": RUN_NOW_GUARD,
    "run_anyway": blocked("t"),
}


def retry(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Send a failed todo (dead letter or open retry window) back to ``pending`` now.
    Effect: a fresh budget (``attempt = 0``), result and timestamps cleared; ``attempts_total``
    kept, so attempt numbering continues. Attempt rows: none (no lease ends)."""
    params = _params(op, todo_id, note=note)
    stmt = _single(ChangeOp.RETRY, "todo.retry", RETRY_SET, RETRY_GUARD, params, ready_when="TRUE")

    def finish(rows: list[dict]) -> Todo:
        try:
            return stmt.finish(rows)
        except Conflict as exc:
            raise Conflict(
                f"{exc.message} (only a failed todo can be retried, "
                "and only while no newer live todo holds its idempotency key)"
            ) from None

    return Statement(stmt.sql, stmt.params, finish)


def cancel(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Stop a todo for good. Guard: pending, claimed or failed.
    Effect: ``canceled``, lease and retry window cleared. Attempt: if open, ``canceled``/``canceled``."""
    return _single(
        ChangeOp.CANCEL,
        "todo.cancel",
        CANCEL_SET,
        CANCEL_GUARD,
        _params(op, todo_id, note=note),
        attempt_set=CANCEL_ATTEMPT,
        finished="upd",
        done=False,
    )


@dataclass(frozen=True)
class DownstreamCanceled:
    """What cancel with everything downstream did: the todo asked for, and the ids of the todos
    downstream of it it canceled with it (sorted)."""

    todo: Todo
    downstream: tuple[str, ...]


# Every todo downstream of ``%(id)s``: its children, their children, to any depth, whatever their
# state or ``on_parent_failure`` (the todo itself included). UNION drops repeats: a todo reached by
# two paths is listed once (the dependencies cannot form a cycle: a parent exists before its child).
DOWNSTREAM: LiteralString = """downstream(id) AS (
    SELECT %(id)s::text
    UNION
    SELECT d.child_id FROM todo_dependencies d JOIN downstream w ON d.parent_id = w.id
)"""


def cancel_downstream(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[DownstreamCanceled]:
    """Cancel a todo and every unfinished todo downstream of it, in one statement
    (docs/lifecycle.md, "Dependencies", "Cancel with everything downstream").

    Guard: the todo itself passes cancel's guard and the person acts on its team (else the miss
    is classified as a cancel's); each downstream todo is canceled when it passes the same guard
    and the person acts on its team, and left alone otherwise (finished already, or not theirs).
    Effect: as :func:`cancel`, per row. Attempt: each open one closed ``canceled``/``canceled``.
    Audit: ``todo.cancel`` per row, ``detail = {"downstream_of": <id>}``. Log: ``cancel`` per row.
    Children outside the set (none, unless not the person's) follow their ``on_parent_failure``."""
    params = _params(op, todo_id, note=note)
    params["detail"] = Jsonb({"downstream_of": params["id"]})
    children, woken = _children("upd", False)
    sql = f"""
WITH RECURSIVE {DOWNSTREAM},
{_prior("t.id IN (SELECT id FROM downstream)", CANCEL_GUARD, order=True)},
upd AS (
    -- nothing at all unless the todo asked for is itself among the rows locked
    UPDATE todos t SET {CANCEL_SET}, updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND {CANCEL_GUARD}
      AND EXISTS (SELECT 1 FROM prior r WHERE r.id = %(id)s)
    RETURNING t.*, p.state_before
),
open_attempt AS (
    UPDATE todo_attempts a SET {CANCEL_ATTEMPT}
    FROM upd u WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),
audit AS ({audit_todos("todo.cancel", "upd")}),
logged AS ({log_todos(ChangeOp.CANCEL, "upd", before="r.state_before")}){children},
result AS (
    SELECT {TODO_COLUMNS},
           (SELECT coalesce(array_agg(d.id ORDER BY d.id), '{{}}') FROM upd d WHERE d.id <> %(id)s) AS downstream{woken}
    FROM upd WHERE id = %(id)s
)
SELECT r.*, {operator_miss()} AS miss FROM (SELECT 1) one LEFT JOIN result r ON true"""

    def finish(rows: list[dict]) -> DownstreamCanceled:
        if rows[0]["id"] is None:
            _raise_miss(rows[0], "cancel", params["id"])
        return DownstreamCanceled(Todo.from_row(rows[0]), tuple(rows[0]["downstream"]))

    return Statement(sql, params, finish)


# Run anyway (docs/lifecycle.md, "Dependencies"): the todo stops waiting for its parents. Its
# dependency rows stay, for the drawer's history; the parents' later completions count off only
# blocked children, so they leave it alone. Its own run-at time, if still ahead, comes back.
RUN_ANYWAY_SET: LiteralString = """parents_left = 0, run_at_after_block = NULL,
    next_retry_at = CASE WHEN t.run_at_after_block > now() THEN t.run_at_after_block END"""


def run_anyway(op: OperatorScope, todo_id: Any, *, note: Any = None) -> Statement[Todo]:
    """Unblock a blocked todo now, whatever its parents. Guard: blocked. Effect: no parents left
    to wait for; its own run-at time restored (else claimable now). Attempt rows: none.
    Log: ``blocked`` → ``pending`` or ``scheduled`` (op ``run_now``); waiting agents woken.
    Audit: ``todo.run_anyway``."""
    return _single(
        ChangeOp.RUN_NOW,
        "todo.run_anyway",
        RUN_ANYWAY_SET,
        blocked("t"),
        _params(op, todo_id, note=note),
        ready_when="next_retry_at IS NULL",
    )


def _bulk(
    verb: ChangeOp,
    action: LiteralString,
    set_todo: LiteralString,
    guard: LiteralString,
    op: OperatorScope,
    ids: Any,
    note: Any,
    *,
    attempt_set: LiteralString | None = None,
    ready: bool = False,
    ready_when: LiteralString | None = None,
    finished: LiteralString | None = None,
    done: bool = True,
) -> Statement[BulkOutcome]:
    todo_ids = inputs.todo_ids(ids)
    if len(todo_ids) > 1000:
        raise Invalid("ids", "at most 1000 ids per statement")
    params = _params(op, note=note)
    params["ids"] = todo_ids
    attempt = (
        f"""
open_attempt AS (
    UPDATE todo_attempts a SET {attempt_set}
    FROM upd u WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),"""
        if attempt_set
        else ""
    )
    wake = notify_ready("upd", ready_when) if ready_when else notify_ready("upd") if ready else "0"
    children, woken = _children(finished, done)
    sql = f"""
WITH {_prior("t.id = ANY(%(ids)s::text[])", guard, order=True)},
upd AS (
    UPDATE todos t SET {set_todo}, updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND {guard}
    RETURNING t.*, p.state_before
),{attempt}
audit AS ({audit_todos(action, "upd")}),
logged AS ({log_todos(verb, "upd", before="r.state_before")}){children},
woken AS (
    SELECT {wake} AS n{woken}
)
SELECT u.id, (SELECT n FROM woken) AS notified FROM upd u"""

    return Statement(sql, params, BulkOutcome.reader(todo_ids))


def retry_many(op: OperatorScope, ids: Any, *, note: Any = None) -> Statement[BulkOutcome]:
    """Bulk retry: the same guard and effect as :func:`retry`; rows whose state moved are skipped."""
    return _bulk(ChangeOp.RETRY, "todo.retry", RETRY_SET, BULK_GUARDS["retry"], op, ids, note, ready=True)


def cancel_many(op: OperatorScope, ids: Any, *, note: Any = None) -> Statement[BulkOutcome]:
    """Bulk cancel: the same guard and effect as :func:`cancel`."""
    return _bulk(
        ChangeOp.CANCEL,
        "todo.cancel",
        CANCEL_SET,
        BULK_GUARDS["cancel"],
        op,
        ids,
        note,
        attempt_set=CANCEL_ATTEMPT,
        finished="upd",
        done=False,
    )


def run_anyway_many(op: OperatorScope, ids: Any, *, note: Any = None) -> Statement[BulkOutcome]:
    """Bulk run anyway (a bulk job's chunk, the Board's Blocked tab): the same guard and effect as
    :func:`run_anyway`, per row; a row no longer blocked is skipped and reported. Audit: one
    ``todo.run_anyway`` row per todo; log ``run_now``; agents woken for those claimable now."""
    return _bulk(
        ChangeOp.RUN_NOW,
        "todo.run_anyway",
        RUN_ANYWAY_SET,
        BULK_GUARDS["run_anyway"],
        op,
        ids,
        note,
        ready_when="next_retry_at IS NULL",
    )


def assign(op: OperatorScope, todo_id: Any, assignee: Any) -> Statement[Todo]:
    """Reserve a pending todo for one owner (``human:<id>`` or ``endpoint:<uuid>``), or clear it.
    Guard: pending. Attempt rows: none."""
    value = inputs.label("assignee", assignee)
    if value is not None and not (value.startswith("human:") or value.startswith("endpoint:")):
        raise Invalid("assignee", "must be human:<user id> or endpoint:<endpoint id>")
    params = _params(op, todo_id, detail={"assignee": value})
    params["assignee"] = value
    return _single(
        ChangeOp.ASSIGN,
        "todo.assign" if value else "todo.unassign",
        "assignee = %(assignee)s",
        f"t.state = {TodoState.PENDING.sql}",
        params,
        ready_when="TRUE",
    )


def set_priority(op: OperatorScope, todo_id: Any, priority: Any) -> Statement[Todo]:
    """Change the claim order of a live todo (lower claims first). Guard: pending, claimed or failed."""
    value = inputs.require_int("priority", priority, *inputs.PRIORITY_RANGE)
    params = _params(op, todo_id, detail={"priority": value})
    params["priority"] = value
    return _single(
        ChangeOp.PRIORITY,
        "todo.priority",
        "priority = %(priority)s",
        f"t.state IN ({TodoState.PENDING.sql}, {TodoState.CLAIMED.sql}, {TodoState.FAILED.sql})",
        params,
    )


def create(
    op: OperatorScope,
    *,
    endpoint_id: Any,
    queue: Any,
    title: Any,
    kind: Any = None,
    source: Any = None,
    payload: Any = None,
    idempotency_key: Any = None,
    priority: Any = None,
    max_attempts: Any = None,
    note: Any = None,
    requires: Any = None,
    after: Any = None,
    on_parent_failure: Any = None,
    team_id: Any = None,
    rate_key: Any = None,
    timeout_seconds: Any = None,
) -> Statement[Created]:
    """A human enqueues a todo on one of their teams' endpoints, in a queue of its scope.
    Idempotent by key exactly as the agent's create; ``requires``, ``rate_key``,
    ``timeout_seconds``, ``after`` and ``on_parent_failure`` as the agent's (``dependencies.py``:
    ``after`` names todos of ``team_id``, the endpoint's team, which the guard checks). Attempt
    rows: none."""
    try:
        endpoint = UUID(str(endpoint_id))
    except ValueError:
        raise Invalid("endpoint", "must be an endpoint id") from None
    parents = inputs.after(after)
    rule = inputs.on_parent_failure(on_parent_failure)  # a bad word is refused with or without parents
    if parents and team_id is None:
        raise TypeError("a create with parents needs the endpoint's team_id")
    params = _params(op, note=note)
    params.update(
        endpoint_id=endpoint,
        queue=inputs.queue(queue),
        title=inputs.title(title),
        kind=inputs.label("kind", kind),
        source=inputs.label("source", source) or "board",
        payload=inputs.json_value("payload", payload),
        key=inputs.idempotency_key(idempotency_key),
        priority=inputs.priority(priority),
        max_attempts=inputs.max_attempts(max_attempts),
        requires=inputs.capability_labels("requires", requires),
        rate_key=inputs.rate_key(rate_key),
        timeout_seconds=inputs.timeout_seconds(timeout_seconds),
    )
    if parents:
        params.update(after=parents, on_parent_failure=rule, team_id=team_id, not_before=None)
    sql = _create_sql(bool(parents))

    def finish(rows: list[dict]) -> Created:
        row = rows[0]
        if parents and row["refused_n"] is not None:
            raise dependencies.refusal(parents, row["refused_n"], row["refused_why"])
        if row["id"] is None:
            miss = row["miss"]
            if miss == "not_found":
                raise NotFound(f"no such endpoint: {endpoint}")
            if miss == "forbidden":
                raise Forbidden(
                    f"cannot create on endpoint {endpoint}: it must be active, the queue {params['queue']!r} "
                    "must be in its scope, and your role must be operator or admin"
                )
            raise StaleSnapshot("a concurrent create with the same idempotency key is in flight; retry")
        return Created(todo=Todo.from_row(row), created=row["created"])

    return Statement(sql, params, finish)


def _create_sql(with_parents: bool) -> LiteralString:
    """A person's create. With parents it also reads and locks them (of the endpoint's team:
    ``allowed`` checks ``%(team_id)s``), refuses a bad one (``refused``: nothing is inserted, the
    answer names it) and writes the dependency rows, as an agent's create does."""
    head: LiteralString = ""
    team_guard: LiteralString = ""
    columns: LiteralString = "rate_key, timeout_seconds"
    values: LiteralString = "%(rate_key)s, %(timeout_seconds)s"
    where: LiteralString = ""
    tail: LiteralString = ""
    refused: LiteralString = ""
    ready: LiteralString = notify_ready("ins")
    if with_parents:
        head = f"{dependencies.PARENTS},\n"
        team_guard = "\n      AND e.team_id = %(team_id)s"
        columns = (
            "rate_key, timeout_seconds,\n"
            "                       next_retry_at, parents_left, on_parent_failure, run_at_after_block"
        )
        values = f"""%(rate_key)s, %(timeout_seconds)s,
           -- blocked (scheduled for never) while a parent is open
           {dependencies.BLOCKED_TIME},
           (SELECT n FROM open_parents), %(on_parent_failure)s,
           {dependencies.OWN_TIME}"""
        where = "\n    WHERE NOT EXISTS (SELECT 1 FROM refused)"
        tail = f",\n{dependencies.EDGES}"
        refused = ",\n       (SELECT f.n FROM refused f) AS refused_n, (SELECT f.why FROM refused f) AS refused_why"
        ready = notify_ready("ins", "next_retry_at IS NULL")
    return f"""
WITH {head}target AS (
    SELECT e.id, e.scope_queues FROM endpoints e
    WHERE e.id = %(endpoint_id)s
      AND {member_of("e.team_id")}
),
allowed AS (
    SELECT e.id FROM endpoints e
    WHERE e.id = %(endpoint_id)s
      AND {member_of("e.team_id", roles=ACTING_ROLES)}
      AND e.state = 'active' AND %(queue)s = ANY(e.scope_queues){team_guard}
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       priority, max_attempts, requires, {columns})
    SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), a.id, %(queue)s, %(source)s, %(kind)s,
           %(title)s, %(payload)s, %(key)s, %(priority)s, %(max_attempts)s, %(requires)s::text[],
           {values}
    FROM allowed a{where}
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE {DEDUPE_PREDICATE}
    DO NOTHING
    RETURNING *
),
audit AS ({audit_todos("todo.create", "ins")}),
logged AS ({log_todos(ChangeOp.CREATE, "ins", before=None)}){tail},
existing AS (
    SELECT * FROM todos  -- raw, like ins: result reads both through TODO_COLUMNS
    WHERE %(key)s::text IS NOT NULL AND endpoint_id = %(endpoint_id)s AND idempotency_key = %(key)s
      AND {DEDUPE_PREDICATE}
      AND EXISTS (SELECT 1 FROM allowed)
),
result AS (
    SELECT true AS created, {TODO_COLUMNS},
           {ready} AS notified
    FROM ins
    UNION ALL
    SELECT false, {TODO_COLUMNS}, 0
    FROM existing WHERE NOT EXISTS (SELECT 1 FROM ins)
)
SELECT r.*, CASE
    WHEN NOT EXISTS (SELECT 1 FROM target) THEN 'not_found'
    WHEN NOT EXISTS (SELECT 1 FROM allowed) THEN 'forbidden'
    ELSE 'conflict' END AS miss{refused}
FROM (SELECT 1) one LEFT JOIN result r ON true"""


def pause_queue(op: OperatorScope, team_id: Any, queue: Any, *, note: Any = None) -> Statement[bool]:
    """Pause ``queue`` for a team: agents' claims skip it until resumed. Returns False if it was
    already paused. Guard: the human is an operator or admin of the team."""
    return _pause_statement(op, team_id, queue, note, pause=True)


def resume_queue(op: OperatorScope, team_id: Any, queue: Any) -> Statement[bool]:
    """Resume a paused queue; its pending work becomes claimable again (agents are woken)."""
    return _pause_statement(op, team_id, queue, None, pause=False)


def _pause_statement(op: OperatorScope, team_id: Any, queue: Any, note: Any, *, pause: bool) -> Statement[bool]:
    try:
        team = UUID(str(team_id))
    except ValueError:
        raise Invalid("team", "must be a team id") from None
    params = _params(op, note=note, note_max_chars=500)  # queue_pauses.note holds 500 characters
    params.update(team_id=team, queue=inputs.queue(queue))
    acts = member_of("%(team_id)s", roles=ACTING_ROLES)
    sees = member_of("%(team_id)s")
    if pause:
        change = f"""INSERT INTO queue_pauses (team_id, queue, paused_by, note)
            SELECT %(team_id)s, %(queue)s, %(user_id)s, %(note)s
            WHERE {acts}
            ON CONFLICT (team_id, queue) DO NOTHING RETURNING team_id, queue"""
        action, op_name, wake = "queue.pause", ChangeOp.PAUSE, "0"
    else:
        change = f"""DELETE FROM queue_pauses
            WHERE team_id = %(team_id)s AND queue = %(queue)s
              AND {acts}
            RETURNING team_id, queue"""
        action, op_name, wake = (
            "queue.resume",
            ChangeOp.RESUME,
            f"""(SELECT count({ready_message("e.id", "c.queue")})
             FROM changed c JOIN endpoints e ON e.team_id = c.team_id AND c.queue = ANY(e.scope_queues))""",
        )
    sql = f"""
WITH changed AS ({change}),
audit AS ({audit_row(action, "changed", team="team_id", queue="queue", note="%(note)s")}),
logged AS ({log_change(op_name, "changed c", team="c.team_id", queue="c.queue")})
SELECT (SELECT count(*) FROM changed) AS changed,
       {sees} AS sees,
       {acts} AS acts,
       {wake} AS notified"""

    def finish(rows: list[dict]) -> bool:
        row = rows[0]
        if not row["sees"]:
            raise NotFound(f"no such team: {team}")
        if not row["acts"]:
            raise Forbidden("your role on this team is read-only")
        return bool(row["changed"])

    return Statement(sql, params, finish)

"""Background transitions: the sweeps that keep the queue honest without anyone asking.

Each sweep takes at most ``limit`` rows with ``FOR UPDATE SKIP LOCKED``, so several Board
processes can run the loops at once: they split the work instead of waiting on each other, and a
row a claimer is taking over at the same moment is left to the claimer.
"""

from __future__ import annotations

from typing import LiteralString

from django.conf import settings

from todos.core.db import Statement
from todos.core.store.fragments import (
    BACKOFF,
    board_state,
    children_failed,
    children_woken,
    last_attempt_reason_group,
    log_todos,
    notify_ready,
    run_time_limit,
    search_document,
    stored_reason_group,
)
from todos.core.store.records import SweepOutcome
from todos.core.words import BoardState, ChangeOp, TodoState

SWEEP_LIMIT = 500


def _outcome(rows: list[dict]) -> SweepOutcome:
    ids = tuple(row["id"] for row in rows)
    return SweepOutcome(count=len(ids), ids=ids)


def reap(limit: int = SWEEP_LIMIT) -> Statement[SweepOutcome]:
    """Lapsed leases whose holder went silent.

    Guard: ``claimed`` and ``lease_expires_at < now()``. Effect: back to ``pending``, or a dead
    letter (``failed``, no retry window) when the attempt budget is spent — or when the todo's
    endpoint was revoked while the lease was held (a claim that raced the revoke), since no
    agent could ever claim it again.
    Attempt row: closed ``reaped``/``requeued`` or ``reaped``/``dead_lettered``.
    Log: ``claimed`` → ``pending`` or ``dead``; a dead letter's blocked children follow their
    ``on_parent_failure`` (``fragments.children_failed``). Agents waiting on the queues of requeued todos are
    woken (one ``board_ready`` per queue and sweep, not per worker commit: no line at the lock).
    """
    sql = f"""
WITH cand AS (
    SELECT t.id, (t.attempt >= t.max_attempts OR e.state = 'revoked') AS dead
    FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.state = {TodoState.CLAIMED.sql} AND t.lease_expires_at < now()
    ORDER BY t.lease_expires_at
    LIMIT %(limit)s
    FOR UPDATE OF t SKIP LOCKED
),
reaped AS (
    UPDATE todos t SET
        state = CASE WHEN c.dead THEN {TodoState.FAILED.sql} ELSE {TodoState.PENDING.sql} END,
        completed_at = CASE WHEN c.dead THEN now() END,
        {last_attempt_reason_group()},
        owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state = {TodoState.CLAIMED.sql} AND t.lease_expires_at < now()
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'reaped',
        disposition = CASE WHEN r.state = {TodoState.FAILED.sql} THEN 'dead_lettered' ELSE 'requeued' END
    FROM reaped r
    WHERE a.todo_id = r.id AND a.seq = r.attempts_total AND a.ended_at IS NULL
),
logged AS ({log_todos(ChangeOp.REAP, "reaped", before=BoardState.CLAIMED)}),
{children_failed(f"(SELECT id FROM reaped WHERE state = {TodoState.FAILED.sql})")}
SELECT r.id,
       {notify_ready("reaped", f"state = {TodoState.PENDING.sql}")} AS notified,
       {children_woken()} AS woken
FROM reaped r"""
    return Statement(sql, {"limit": limit}, _outcome)


def timed_out_error(seconds: LiteralString) -> LiteralString:
    """The error object of an attempt that ran past its limit of ``seconds`` (SQL)."""
    return f"""jsonb_build_object(
            'type', 'timed_out',
            'message', format('ran past its run-time limit of %%s seconds', {seconds}),
            'truncated', false)"""


def time_out(limit: int = SWEEP_LIMIT) -> Statement[SweepOutcome]:
    """Attempts that ran past their run-time limit while their holder still heartbeated
    (docs/lifecycle.md, "Run-time limits"): the worker is alive but the work is stuck.

    Guard: ``claimed`` by an agent (``endpoint:`` owner) whose lease has not lapsed (a lapsed one
    is the reaper's: the holder went silent), and ``claimed_at`` + the limit (the todo's own, else
    its team's default for the queue, ``fragments.run_time_limit``) ``< now()``; a todo with no
    limit is never a candidate. Found among the claimed todos only (the ``todos_claimed`` index);
    the claim statements are untouched. Effect, as a failure reported by ``fail``: ``failed`` with
    the same backoff (``fragments.BACKOFF``) below the attempt cap, else a dead letter
    (``completed_at = now()``; so too when the endpoint was revoked, as the reaper does); owner and
    lease cleared, ``result`` kept. Attempt row: closed ``timed_out``/``retry_scheduled`` or
    ``timed_out``/``dead_lettered``, its error naming the limit. Log: ``timeout``: ``claimed`` →
    ``retry`` or ``dead``; a dead letter's blocked children follow their ``on_parent_failure``
    (``fragments.children_failed``; those it unblocks wake their queues). Otherwise wakes nobody:
    the backoff is never zero, so no retry is due at once (the requeue sweep wakes the waiters).
    """
    sql = f"""
WITH cand AS (
    SELECT t.id, lim.seconds,
           (t.attempt >= t.max_attempts OR e.state = 'revoked') AS dead
    FROM todos t
    JOIN endpoints e ON e.id = t.endpoint_id
    CROSS JOIN LATERAL (
        SELECT {run_time_limit("e.team_id")} AS seconds
    ) lim
    WHERE t.state = {TodoState.CLAIMED.sql} AND t.owner LIKE 'endpoint:%%' AND t.lease_expires_at >= now()
      AND t.claimed_at + make_interval(secs => lim.seconds) < now()
    ORDER BY t.claimed_at
    LIMIT %(limit)s
    FOR UPDATE OF t SKIP LOCKED
),
timed AS (
    -- the guard again on the locked row: a complete (or any report) that won the lock ended it
    UPDATE todos t SET
        state = {TodoState.FAILED.sql}, owner = NULL, lease_expires_at = NULL,
        next_retry_at = CASE WHEN c.dead THEN NULL
            ELSE now() + {BACKOFF} END,
        completed_at = CASE WHEN c.dead THEN now() END,
        {stored_reason_group(timed_out_error("c.seconds"), "NULL", "NULL")},
        updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state = {TodoState.CLAIMED.sql} AND t.lease_expires_at >= now()
      AND t.claimed_at + make_interval(secs => c.seconds) < now()
    RETURNING t.*, {timed_out_error("c.seconds")} AS timeout_error
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'timed_out',
        disposition = CASE WHEN r.next_retry_at IS NULL THEN 'dead_lettered' ELSE 'retry_scheduled' END,
        error = r.timeout_error,
        {search_document("r.timeout_error", "a.summary")}
    FROM timed r
    WHERE a.todo_id = r.id AND a.seq = r.attempts_total AND a.ended_at IS NULL
),
logged AS ({log_todos(ChangeOp.TIMEOUT, "timed", before=BoardState.CLAIMED)}),
{children_failed("(SELECT id FROM timed WHERE next_retry_at IS NULL)")}
SELECT r.id, {children_woken()} AS woken FROM timed r"""
    return Statement(sql, {"limit": limit}, _outcome)


# The Board state a requeued todo left: a failed one was a retry, a pending one was scheduled
# (never claimed: a requeue ends no attempt).
REQUEUED_FROM: LiteralString = (
    f"CASE r.prior_state WHEN {TodoState.FAILED.sql} THEN {BoardState.RETRY.sql} ELSE {BoardState.SCHEDULED.sql} END"
)


def requeue_due_retries(limit: int = SWEEP_LIMIT) -> Statement[SweepOutcome]:
    """Todos whose time has come: failed ones whose retry window elapsed, and scheduled ones
    (pending with a ``next_retry_at``) that are due — the one timestamp serves both.

    Guard: ``failed`` or ``pending``, and ``next_retry_at <= now()``. Effect: ``pending``, time
    cleared, ``attempt`` kept (the budget is not reset). Attempt rows: none (no lease ends).
    Log: ``retry`` or ``scheduled`` → ``pending``; agents waiting on those queues are woken. (A
    claim may take a due todo before this sweep reaches it: it finds it by the same predicate.)
    """
    sql = f"""
WITH cand AS (
    SELECT t.id, t.state AS prior_state FROM todos t
    WHERE t.next_retry_at <= now() AND t.state IN ({TodoState.FAILED.sql}, {TodoState.PENDING.sql})
    ORDER BY t.next_retry_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
),
requeued AS (
    UPDATE todos t SET state = {TodoState.PENDING.sql}, next_retry_at = NULL, updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state IN ({TodoState.FAILED.sql}, {TodoState.PENDING.sql}) AND t.next_retry_at <= now()
    RETURNING t.*, c.prior_state
),
logged AS ({log_todos(ChangeOp.REQUEUE, "requeued", before=REQUEUED_FROM, ended=False)})
SELECT r.id,
       {notify_ready("requeued")} AS notified
FROM requeued r"""
    return Statement(sql, {"limit": limit}, _outcome)


def purge_terminal(limit: int = SWEEP_LIMIT, *, older_than_days: int | None = None) -> Statement[SweepOutcome]:
    """Retention: delete terminal todos (done, canceled, dead letters) completed more than the
    retention age ago. Their attempts go with them (ON DELETE CASCADE); the audit trail stays.
    Log: ``done``, ``canceled`` or ``dead`` → none."""
    days = settings.BOARD_RETENTION_DAYS if older_than_days is None else older_than_days
    sql = f"""
WITH cand AS (
    -- each endpoint's oldest finished todos (``todos_endpoint_finished``, its finished time)
    SELECT o.id FROM endpoints e
    CROSS JOIN LATERAL (
        SELECT t.id FROM todos t
        WHERE t.endpoint_id = e.id AND t.completed_at < now() - make_interval(days => %(days)s)
          AND (t.state IN ({TodoState.DONE.sql}, {TodoState.CANCELED.sql})
               OR (t.state = {TodoState.FAILED.sql} AND t.next_retry_at IS NULL))
        LIMIT %(limit)s
        FOR UPDATE OF t SKIP LOCKED
    ) o
    LIMIT %(limit)s
),
purged AS (
    DELETE FROM todos t USING cand c WHERE t.id = c.id
    RETURNING t.id, t.queue, t.endpoint_id, t.claimed_at, {board_state("t")} AS state_before
),
logged AS ({log_todos(ChangeOp.PURGE, "purged", before="r.state_before", after=None)})
SELECT p.id FROM purged p"""
    return Statement(sql, {"limit": limit, "days": days}, _outcome)

"""Bulk jobs: the rows that make a bulk retry/cancel/run now durable and workable by any Board process.

A job is created ``queued`` (:func:`create`), fixed to its ids once by a worker
(:func:`take_queued` then :func:`materialize`: ``running``, the ids in chunks), worked chunk by
chunk (:func:`take_chunk`, the store's ``retry_many`` / ``cancel_many``, then :func:`chunk_done`,
all three in one transaction on one connection), and ends ``done``, ``failed`` (:func:`fail`) or
``canceled`` (:func:`stop`, by the human who started it).

Who works what is decided by row locks, not by time: :func:`take_queued` and :func:`take_chunk`
lock their row ``FOR UPDATE SKIP LOCKED`` inside the transaction that does the work, so two
workers never hold the same row, and a worker that dies takes its lock (and its uncommitted work)
with it. ``worker`` and ``heartbeat_at`` on the job say which process last worked it and when.

The todos themselves are changed only by ``todos.core.store.human``'s bulk statements, under their
guards and ``operatorOwns`` at the moment of each chunk: a job's ``team_ids`` narrows what it
collects, it never widens what the store lets its starter do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from todos.core import compose
from todos.core.db import Statement
from todos.core.errors import Conflict, Forbidden, Invalid
from todos.core.store import inputs
from todos.core.store.fragments import ACTING_ROLES
from todos.core.store.records import BulkOutcome
from todos.core.store.scopes import OperatorScope

ACTIONS = ("retry", "cancel", "run_now", "run_anyway")
# A dead-letter group holds failed todos: none of them waits for a time or for parents, so none
# can be run now or run anyway.
GROUP_ACTIONS = ("retry", "cancel")
NO_GROUP_RUN_NOW = "a dead-letter group cannot be run now: only scheduled todos can (retry the group instead)"
SCOPES = ("selected", "matching", "group")
CHUNK = 500
SKIPPED_SHOWN = 20
MAX_SELECTED = 1000


@dataclass(frozen=True)
class QueuedJob:
    """What a worker needs to fix a job's ids."""

    id: UUID
    user_id: int
    username: str
    action: str
    scope: str
    filter: dict
    group_reason: str | None
    selected_ids: tuple[str, ...]
    team_ids: tuple[UUID, ...]


@dataclass(frozen=True)
class Chunk:
    """One chunk of a running job, locked by the transaction that took it."""

    job_id: UUID
    seq: int
    todo_ids: tuple[str, ...]
    action: str
    user_id: int
    username: str
    note: str | None

    @property
    def scope(self) -> OperatorScope:
        return OperatorScope(user_id=self.user_id, username=self.username)


def _filter_params(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise Invalid("filter", "must be the filter's parameters (names and text values)")
    for key, text in value.items():
        if "\x00" in key or "\x00" in text or len(key) > 32 or len(text) > 1000:
            raise Invalid("filter", f"parameter {key[:32]!r} is not a filter value")
    return value


def create(
    op: OperatorScope,
    *,
    action: Any,
    scope: Any,
    description: str,
    filter_params: Any = None,
    group_reason: Any = None,
    selected_ids: Any = None,
    note: Any = None,
) -> Statement[UUID]:
    """A new ``queued`` job for the human ``op``.

    Guard: the human is an operator or admin of at least one team (else Forbidden, nothing
    written). Effect: ``team_ids`` is set to those teams — the most the job will ever collect
    from. Inputs are checked before anything is written, each error naming its field.
    """
    if action not in ACTIONS:
        raise Invalid("action", "must be retry, cancel, run_now or run_anyway")
    if scope not in SCOPES:
        raise Invalid("scope", "must be selected, matching or group")
    if scope == "group" and action not in GROUP_ACTIONS:
        raise Invalid("action", NO_GROUP_RUN_NOW)
    params_filter = _filter_params(filter_params if filter_params is not None else {})
    ids: list[str] | None = None
    reason: str | None = None
    if scope == "selected":
        ids = inputs.todo_ids(selected_ids if selected_ids is not None else [], "ids")
        if not ids:
            raise Invalid("ids", "select at least one todo first")
        if len(ids) > MAX_SELECTED:
            raise Invalid("ids", f"at most {MAX_SELECTED} selected todos")
    if scope == "group":
        reason = inputs.require_str("group", group_reason) if group_reason is not None else ""
        if not reason or len(reason) > 300 or "\x00" in reason:
            raise Invalid("group", "choose a failure-reason group")
    params = {
        "user_id": op.user_id,
        "username": op.username,
        "action": action,
        "scope": scope,
        "filter": Jsonb(params_filter),
        "group_reason": reason,
        "selected_ids": ids,
        "description": description[:1000],
        "note": inputs.note(note),
    }
    sql = f"""
WITH acting AS (
    SELECT array_agg(team_id ORDER BY team_id) AS team_ids FROM team_members
    WHERE user_id = %(user_id)s AND role IN {ACTING_ROLES}
)
INSERT INTO bulk_jobs (user_id, username, action, scope, filter, group_reason, selected_ids, team_ids,
                       description, note)
SELECT %(user_id)s, %(username)s, %(action)s, %(scope)s, %(filter)s, %(group_reason)s, %(selected_ids)s::text[],
       a.team_ids, %(description)s, %(note)s
FROM acting a WHERE a.team_ids IS NOT NULL
RETURNING id"""

    def finish(rows: list[dict]) -> UUID:
        if not rows:
            raise Forbidden("your role is read-only on every team: a bulk job needs operator or admin")
        return rows[0]["id"]

    return Statement(sql, params, finish)


def take_queued() -> Statement[QueuedJob | None]:
    """Lock the oldest ``queued`` job no other worker holds (``FOR UPDATE SKIP LOCKED``).

    Writes nothing: the lock lasts as long as the caller's transaction, which must also run
    :func:`materialize` (or :func:`fail`). A worker that dies before committing leaves the job
    ``queued`` for the next one.
    """
    sql = """
SELECT id, user_id, username, action, scope, filter, group_reason, selected_ids, team_ids
FROM bulk_jobs WHERE state = 'queued'
ORDER BY created_at
LIMIT 1
FOR UPDATE SKIP LOCKED"""

    def finish(rows: list[dict]) -> QueuedJob | None:
        if not rows:
            return None
        row = rows[0]
        return QueuedJob(
            id=row["id"],
            user_id=row["user_id"],
            username=row["username"],
            action=row["action"],
            scope=row["scope"],
            filter=row["filter"] or {},
            group_reason=row["group_reason"],
            selected_ids=tuple(row["selected_ids"] or ()),
            team_ids=tuple(row["team_ids"] or ()),
        )

    return Statement(sql, {}, finish)


def materialize(job_id: UUID, worker: str, ids: list[str], *, truncated: bool, chunk: int = CHUNK) -> Statement[bool]:
    """Fix a queued job's ids: chunks of at most ``chunk`` ids, in order; ``total`` is their count.

    Guard: the job is still ``queued`` (a job stopped meanwhile stays stopped; returns False).
    Effect: ``running`` with ``started_at`` — or ``done`` at once when there is nothing to do.
    """
    sql = """
WITH job AS (
    UPDATE bulk_jobs SET
        state = CASE WHEN cardinality(%(ids)s::text[]) = 0 THEN 'done' ELSE 'running' END,
        total = cardinality(%(ids)s::text[]), truncated = %(truncated)s,
        started_at = now(), finished_at = CASE WHEN cardinality(%(ids)s::text[]) = 0 THEN now() END,
        worker = %(worker)s, heartbeat_at = now()
    WHERE id = %(id)s AND state = 'queued'
    RETURNING id
),
chunks AS (
    INSERT INTO bulk_job_chunks (job_id, seq, todo_ids)
    SELECT job.id, (u.ord - 1) / %(chunk)s, array_agg(u.todo_id ORDER BY u.ord)
    FROM job CROSS JOIN unnest(%(ids)s::text[]) WITH ORDINALITY AS u(todo_id, ord)
    GROUP BY job.id, (u.ord - 1) / %(chunk)s
)
SELECT count(*) AS n FROM job"""
    params = {"id": job_id, "worker": worker, "ids": list(ids), "truncated": truncated, "chunk": chunk}
    return Statement(sql, params, lambda rows: rows[0]["n"] == 1)


def take_chunk() -> Statement[Chunk | None]:
    """Lock the first chunk not done of the oldest ``running`` job (``FOR UPDATE SKIP LOCKED``).

    Writes nothing: the caller works the chunk and runs :func:`chunk_done` in the same
    transaction. A chunk locked by another worker is skipped, never waited for; a worker that
    dies releases it by rolling back.
    """
    sql = """
SELECT c.job_id, c.seq, c.todo_ids, j.action, j.user_id, j.username, j.note
FROM bulk_job_chunks c JOIN bulk_jobs j ON j.id = c.job_id
WHERE c.done_at IS NULL AND j.state = 'running'
ORDER BY j.created_at, c.job_id, c.seq
LIMIT 1
FOR UPDATE OF c SKIP LOCKED"""

    def finish(rows: list[dict]) -> Chunk | None:
        if not rows:
            return None
        row = rows[0]
        return Chunk(
            job_id=row["job_id"],
            seq=row["seq"],
            todo_ids=tuple(row["todo_ids"]),
            action=row["action"],
            user_id=row["user_id"],
            username=row["username"],
            note=row["note"],
        )

    return Statement(sql, {}, finish)


def chunk_done(chunk: Chunk, outcome: BulkOutcome, worker: str) -> Statement[str]:
    """Mark a chunk done and add what its store statement did to the job; returns the job's state.

    Guard: the chunk is not done yet (else Conflict, and the caller's transaction — the store
    statement included — rolls back). Effect on the job: ``processed``/``changed``/``skipped``
    grow, up to ``SKIPPED_SHOWN`` skipped ids are kept with the state that made the guard refuse
    them, ``worker``/``heartbeat_at`` are stamped, and the last chunk makes a ``running`` job
    ``done``. The counters are read from the job row itself (locked by this update), so two
    workers finishing the last two chunks at once still end the job exactly once.
    """
    shown = compose.integer(SKIPPED_SHOWN)
    sql = f"""
WITH chunk AS (
    UPDATE bulk_job_chunks SET done_at = now(), worker = %(worker)s, changed = %(changed)s, skipped = %(skipped)s
    WHERE job_id = %(job_id)s AND seq = %(seq)s AND done_at IS NULL
    RETURNING job_id, cardinality(todo_ids) AS n
),
sample AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.todo_id, 'state', t.state) ORDER BY s.ord), '[]'::jsonb)
             AS items
    FROM unnest(%(sample)s::text[]) WITH ORDINALITY AS s(todo_id, ord) LEFT JOIN todos t ON t.id = s.todo_id
)
UPDATE bulk_jobs j SET
    processed = j.processed + c.n,
    changed = j.changed + %(changed)s,
    skipped = j.skipped + %(skipped)s,
    skipped_sample = CASE WHEN jsonb_array_length(j.skipped_sample) >= {shown} THEN j.skipped_sample ELSE (
        SELECT coalesce(jsonb_agg(e.item ORDER BY e.ord), '[]'::jsonb)
        FROM jsonb_array_elements(j.skipped_sample || s.items) WITH ORDINALITY AS e(item, ord)
        WHERE e.ord <= {shown}) END,
    worker = %(worker)s, heartbeat_at = now(),
    state = CASE WHEN j.state = 'running' AND j.processed + c.n >= j.total THEN 'done' ELSE j.state END,
    finished_at = CASE WHEN j.state = 'running' AND j.processed + c.n >= j.total THEN now() ELSE j.finished_at END
FROM chunk c, sample s
WHERE j.id = c.job_id
RETURNING j.state"""
    params = {
        "job_id": chunk.job_id,
        "seq": chunk.seq,
        "worker": worker,
        "changed": len(outcome.changed),
        "skipped": len(outcome.skipped),
        "sample": list(outcome.skipped[:SKIPPED_SHOWN]),
    }

    def finish(rows: list[dict]) -> str:
        if not rows:
            raise Conflict(f"bulk job {chunk.job_id}: chunk {chunk.seq} is already done")
        return rows[0]["state"]

    return Statement(sql, params, finish)


def fail(job_id: UUID, error: str, worker: str) -> Statement[bool]:
    """A job that cannot go on. Guard: ``queued`` or ``running``. Effect: ``failed`` with the
    error; the chunks done before it stay done (their changes committed)."""
    sql = """
UPDATE bulk_jobs SET state = 'failed', error = %(error)s, finished_at = now(), worker = %(worker)s, heartbeat_at = now()
WHERE id = %(id)s AND state IN ('queued', 'running')
RETURNING id"""
    return Statement(sql, {"id": job_id, "error": error[:2000], "worker": worker}, lambda rows: bool(rows))


def stop(op: OperatorScope, job_id: UUID) -> Statement[bool]:
    """The human who started a job stops it. Guard: theirs, and ``queued`` or ``running``
    (returns False otherwise). Effect: ``canceled``; a chunk already being worked finishes, no
    other chunk starts."""
    sql = """
UPDATE bulk_jobs SET state = 'canceled', finished_at = now()
WHERE id = %(id)s AND user_id = %(user_id)s AND state IN ('queued', 'running')
RETURNING id"""
    return Statement(sql, {"id": job_id, "user_id": op.user_id}, lambda rows: bool(rows))


def purge_finished(keep_days: int, limit: int = 100) -> Statement[int]:
    """Retention: delete jobs (and their chunks) finished more than ``keep_days`` ago, at most
    ``limit`` per statement, oldest first. Returns how many went."""
    sql = """
DELETE FROM bulk_jobs WHERE id IN (
    SELECT id FROM bulk_jobs WHERE finished_at < now() - make_interval(days => %(days)s)
    ORDER BY finished_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
RETURNING id"""
    return Statement(sql, {"days": keep_days, "limit": limit}, len)

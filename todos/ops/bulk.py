"""Bulk retry, cancel and run now, worked by the background loops of any Board process.

A job is a row (``todos.core.store.bulk_jobs``): the page that starts it only writes the row, and the
``bulk`` loop (``todos.ops.loops``) of whichever process gets there first does the rest:

1. **Fix the ids.** :func:`collect_one` locks a ``queued`` job, reads its ids (the selection,
   everything matching its filter, or one dead-letter group; at most ``MAX_IDS``, newest first)
   and stores them as chunks of ``CHUNK`` ids: the job is ``running`` and its total is final.
2. **Work the chunks.** :func:`work_one_chunk` locks one chunk no one else holds, runs
   ``human.retry_many`` / ``cancel_many`` / ``waiting.run_now_many`` over its ids (one
   statement, audited per row, each row under the store's guard and ``operatorOwns``) and marks
   the chunk done, in one transaction.
   Rows whose state moved since the job fixed its ids are skipped by the guard and reported.

Every step is one transaction holding the row lock of what it works, so the lock *is* the lease:
a worker that dies (process killed, connection lost) rolls back and frees its chunk at once, and a
worker that hangs is cut off by ``idle_in_transaction_session_timeout`` (``HOLD_SECONDS``). A chunk
is done entirely or not at all, and is done once: no todo is retried or canceled twice by a job,
however many processes work it and whichever of them die. Progress and reports are rows, read by
``todos.core.selectors.bulk_jobs`` from any process; a job outlives every process.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from types import SimpleNamespace

import psycopg

from todos.core.db import DictConnection, Statement, execute, pool
from todos.core.errors import Conflict, StoreError
from todos.core.filters import TodoFilter
from todos.core.store import bulk_jobs as store
from todos.core.store import human, waiting
from todos.core.store.records import BulkOutcome

logger = logging.getLogger(__name__)

CHUNK = store.CHUNK
MAX_IDS = 100_000
INTERVAL_SECONDS = 1.0  # how soon an idle loop looks again: a new job starts within about this
HOLD_SECONDS = 60  # the longest a worker may hold a chunk (or a job it is collecting) without a word
KEEP_FINISHED_DAYS = 7
PURGE_EVERY_SECONDS = 3600.0

STORE_CALLS: dict[str, Callable[..., Statement[BulkOutcome]]] = {
    "retry": human.retry_many,
    "cancel": human.cancel_many,
    "run_now": waiting.run_now_many,
    "run_anyway": human.run_anyway_many,
}


def worker_name() -> str:
    """Who is working, as the job row shows it: host, process and thread."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}"[:200]


def _hold(conn: DictConnection) -> None:
    """Bound how long this transaction may keep its row lock if its worker stops talking."""
    limit = f"{int(HOLD_SECONDS * 1000)}ms"
    conn.execute(
        "SELECT set_config('idle_in_transaction_session_timeout', %s, true), set_config('statement_timeout', %s, true)",
        (limit, limit),
    )


# --- 1. fixing a job's ids --------------------------------------------------------------------


def _viewer(job: store.QueuedJob):
    """The starter as the Board sees them now, narrowed to the teams the job may touch."""
    import dataclasses

    from todos.core.selectors.access import viewer_for

    viewer = viewer_for(SimpleNamespace(pk=job.user_id, is_superuser=False, get_username=lambda: job.username))
    allowed = set(job.team_ids)
    endpoints = tuple(e for e in viewer.acting_endpoints() if e.team_id in allowed)
    return dataclasses.replace(viewer, endpoints=endpoints, _teams_by_id={}, _endpoints_by_id={})


def job_filter(params: dict) -> TodoFilter:
    """The stored filter, parsed as the page parsed it (its days in the zone stored beside it,
    the person's at the time). A stored filter that no longer parses
    fails the job rather than silently widening to "all"."""
    from zoneinfo import ZoneInfo

    from django.http import QueryDict

    query = QueryDict(mutable=True)
    query.update({k: v for k, v in params.items() if k != "zone"})
    f = TodoFilter.from_query(query, zone=ZoneInfo(params.get("zone") or "UTC")).first_page()
    if f.errors:
        raise ValueError(f.errors[0].split(";")[0])
    return f


def sources(job: store.QueuedJob) -> Iterable[list[str]]:
    """The job's candidate ids, in chunks, as its scope says (evaluated by the worker)."""
    from todos.core.selectors import bulk_targets, dead_letters

    viewer = _viewer(job)
    if job.scope == "selected":
        return [bulk_targets.visible_ids(viewer, list(job.selected_ids))]
    f = job_filter(job.filter)
    if job.scope == "matching":
        return bulk_targets.iter_matching_ids(viewer, f, job.action, limit=MAX_IDS + 1)
    return dead_letters.group_ids(viewer, f, job.group_reason or "")


def collect(job: store.QueuedJob) -> tuple[list[str], bool]:
    """The job's ids, once each, in order, at most ``MAX_IDS``; and whether more matched."""
    ids: dict[str, None] = {}
    for part in sources(job):
        ids.update(dict.fromkeys(part))
        if len(ids) > MAX_IDS:
            return list(ids)[:MAX_IDS], True
    return list(ids), False


def collect_one() -> bool:
    """Fix the ids of one queued job, if there is one no other worker holds. True if it did."""
    worker = worker_name()
    with pool().connection() as conn, conn.transaction():
        _hold(conn)
        job = execute(store.take_queued(), conn)
        if job is None:
            return False
        try:
            ids, truncated = collect(job)
        except psycopg.Error:
            raise  # the database (restarting, a timeout): the job stays queued for the next try
        except Exception as exc:  # noqa: BLE001 - the same job would fail the same way again
            logger.exception("bulk %s job %s could not collect its todos", job.action, job.id)
            reason = (
                exc.message
                if isinstance(exc, StoreError)
                else str(exc)
                if isinstance(exc, ValueError)
                else "an internal error"
            )
            # The reads ran on other connections: this transaction (and its lock) is intact.
            execute(store.fail(job.id, f"The job could not collect its todos: {reason}.", worker), conn)
            return True
        execute(store.materialize(job.id, worker, ids, truncated=truncated), conn)
    logger.info("bulk %s job %s: %d todos in %d chunks", job.action, job.id, len(ids), -(-len(ids) // CHUNK))
    return True


# --- 2. working the chunks ----------------------------------------------------------------------


def run_chunk(chunk: store.Chunk, conn: DictConnection) -> BulkOutcome:
    """One store statement over the chunk's ids, on the chunk's transaction (a seam for tests
    that move rows, or stop a worker, mid-job)."""
    return execute(STORE_CALLS[chunk.action](chunk.scope, list(chunk.todo_ids), note=chunk.note), conn)


def work_one_chunk() -> bool:
    """Take one chunk no other worker holds, work it and mark it done, all in one transaction.

    True if it worked a chunk. A database error (connection lost, a timeout, a deadlock with
    another bulk statement) or a store :class:`Conflict` (a race the statement lost: run again,
    the guard skips the row) leaves the chunk to the next attempt, by this worker or any other;
    any other error fails the job with a message, since the same chunk would fail the same way.
    """
    worker = worker_name()
    chunk = None
    with pool().connection() as conn:
        try:
            with conn.transaction():
                _hold(conn)
                chunk = execute(store.take_chunk(), conn)
                if chunk is None:
                    return False
                outcome = run_chunk(chunk, conn)
                execute(store.chunk_done(chunk, outcome, worker), conn)
        except (psycopg.Error, Conflict):
            raise  # rolled back: the chunk is free again; the loop logs it and tries again
        except Exception as exc:  # noqa: BLE001 - a job reports its failure instead of retrying it forever
            if chunk is None:
                raise
            logger.exception("bulk job %s failed on chunk %d", chunk.job_id, chunk.seq)
            message = (
                f"The job stopped: {exc.message}"
                if isinstance(exc, StoreError)
                else "The job stopped with an internal error"
            )
            execute(store.fail(chunk.job_id, f"{message}; the chunks before it were applied.", worker), conn)
    return True


# --- the loop body ------------------------------------------------------------------------------

_last_purge = 0.0


def work_once() -> int:
    """One step of the ``bulk`` loop: fix a queued job's ids, else work one chunk. Returns 1 when
    it did something (the loop then runs again at once), 0 when there was nothing to do."""
    if collect_one() or work_one_chunk():
        return 1
    _purge_now_and_then()
    return 0


def _purge_now_and_then() -> None:
    global _last_purge
    now = time.monotonic()
    if now - _last_purge >= PURGE_EVERY_SECONDS:
        _last_purge = now
        execute(store.purge_finished(KEEP_FINISHED_DAYS))


def work_until_idle(timeout: float = 120.0) -> int:
    """Run the loop body until there is nothing left to do (tests, ``manage.py reaper --once``)."""
    deadline = time.monotonic() + timeout
    steps = 0
    while work_once():
        steps += 1
        if time.monotonic() > deadline:
            raise TimeoutError(f"bulk jobs still had work after {timeout:.0f} s")
    return steps

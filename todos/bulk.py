"""Bulk retry and cancel in the background: chunks of at most 500 ids, progress, a final report.

A job first fixes its set of ids (the selection, everything matching a filter, or one dead-letter
group), then runs ``operator.retry_many`` / ``cancel_many`` over chunks of ``CHUNK`` ids. Each
chunk is one store statement (audited per row by the store), so a job interrupted half-way has
changed exactly the chunks that committed. Rows whose state moved between "matching" and their
chunk are skipped by the store's guard and reported as skipped.

Jobs live in a small in-process registry (this process's memory): the page that started a job
polls the process that runs it. Behind a load balancer, pin a session to one Board process (or
poll the same one); a restarted process forgets its finished jobs' reports, never their effects.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from todos.db import execute
from todos.store import operator
from todos.store.scopes import OperatorScope

logger = logging.getLogger(__name__)

CHUNK = 500
MAX_IDS = 100_000
KEEP_FINISHED_SECONDS = 3600
KEEP_JOBS = 200
SKIPPED_SHOWN = 20

STORE_CALLS: dict[str, Callable] = {"retry": operator.retry_many, "cancel": operator.cancel_many}


@dataclass
class BulkJob:
    user_id: int
    username: str
    action: str  # retry | cancel
    description: str
    source: Callable[[], Iterable[list[str]]]  # yields chunks of ids; evaluated in the job's thread
    note: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    state: str = "queued"  # queued → collecting → running → finished | failed
    total: int = 0
    processed: int = 0
    changed: int = 0
    skipped: int = 0
    skipped_sample: list[str] = field(default_factory=list)
    truncated: bool = False  # more than MAX_IDS matched; the job covered the first MAX_IDS
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def finished(self) -> bool:
        return self.state in ("finished", "failed")

    @property
    def percent(self) -> int:
        if self.finished:
            return 100
        return int(100 * self.processed / self.total) if self.total else 0

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


_lock = threading.Lock()
_jobs: dict[str, BulkJob] = {}


def _prune(now: float) -> None:
    for job_id, job in list(_jobs.items()):
        if job.finished and job.finished_at and now - job.finished_at > KEEP_FINISHED_SECONDS:
            del _jobs[job_id]
    if len(_jobs) > KEEP_JOBS:
        for job_id in sorted(_jobs, key=lambda j: _jobs[j].created_at)[: len(_jobs) - KEEP_JOBS]:
            if _jobs[job_id].finished:
                del _jobs[job_id]


def get(job_id: str, user_id: int) -> BulkJob | None:
    """A job, only for the human who started it (anyone else gets None → the Board's 404)."""
    with _lock:
        job = _jobs.get(job_id)
    return job if job is not None and job.user_id == user_id else None


def start(job: BulkJob, *, background: bool = True) -> BulkJob:
    with _lock:
        _prune(time.time())
        _jobs[job.id] = job
    if background:
        threading.Thread(target=run, args=(job,), name=f"bulk-{job.id[:8]}", daemon=True).start()
    else:
        run(job)
    return job


def chunks(ids: list[str], size: int = CHUNK) -> Iterator[list[str]]:
    for start_at in range(0, len(ids), size):
        yield ids[start_at:start_at + size]


def run_chunk(job: BulkJob, scope: OperatorScope, ids: list[str]):
    """One store statement over ≤ CHUNK ids (a seam for tests that move rows mid-job)."""
    return execute(STORE_CALLS[job.action](scope, ids, note=job.note))


def run(job: BulkJob) -> None:
    scope = OperatorScope(user_id=job.user_id, username=job.username)
    try:
        job.state = "collecting"
        ids: list[str] = []
        seen: set[str] = set()
        for part in job.source():
            for todo_id in part:
                if todo_id not in seen:
                    seen.add(todo_id)
                    ids.append(todo_id)
            if len(ids) > MAX_IDS:
                ids = ids[:MAX_IDS]  # sources ask for MAX_IDS + 1 so this notices "more"
                job.truncated = True
                break
            job.total = len(ids)
        job.total = len(ids)
        job.state = "running"
        for part in chunks(ids):
            outcome = run_chunk(job, scope, part)
            job.processed += len(part)
            job.changed += len(outcome.changed)
            job.skipped += len(outcome.skipped)
            room = SKIPPED_SHOWN - len(job.skipped_sample)
            if room > 0:
                job.skipped_sample.extend(outcome.skipped[:room])
        job.state = "finished"
    except Exception as exc:  # noqa: BLE001 - a job reports its failure instead of dying silently
        logger.exception("bulk %s job %s failed", job.action, job.id)
        job.error = "The job stopped with an internal error; the chunks before it were applied."
        if hasattr(exc, "message"):
            job.error = f"The job stopped: {exc.message}"
        job.state = "failed"
    finally:
        job.finished_at = time.time()
        job.done.set()

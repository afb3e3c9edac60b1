"""A bulk job's progress and report, as its page and fragment show them, from any process.

A job is shown only to the human who started it: for anyone else, an unknown id and an id that
is not even a UUID, the answer is the same ``None`` (the Board's uniform 404).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer

FINISHED = ("done", "failed", "canceled")
# A job no worker has touched for this long is shown as waiting for one (loops not running?).
STALLED_SECONDS = 30


@dataclass(frozen=True)
class SkippedTodo:
    id: str
    state: str | None  # the state that made the store's guard refuse it; None: gone or no longer yours


@dataclass(frozen=True)
class BulkJob:
    id: UUID
    action: str
    scope: str
    description: str
    note: str | None
    state: str  # queued | running | done | failed | canceled
    total: int
    processed: int
    changed: int
    skipped: int
    truncated: bool
    skipped_sample: tuple[SkippedTodo, ...]
    error: str | None
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    stalled: bool

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def remaining(self) -> int:
        return self.total - self.processed

    @property
    def percent(self) -> int:
        if self.state == "done":
            return 100
        return int(100 * self.processed / self.total) if self.total else 0


SQL: LiteralString = f"""
SELECT id, action, scope, description, note, state, total, processed, changed, skipped, truncated,
       skipped_sample, error, worker, created_at, started_at, finished_at,
       (state IN ('queued', 'running')
        AND coalesce(heartbeat_at, created_at)
            < now() - make_interval(secs => {compose.integer(STALLED_SECONDS)})) AS stalled
FROM bulk_jobs WHERE id = %(id)s AND user_id = %(user_id)s"""


def parse_id(raw) -> UUID | None:
    try:
        return UUID(str(raw))
    except (TypeError, ValueError):
        return None


def get(viewer: Viewer, job_id) -> BulkJob | None:
    """The job ``job_id`` if ``viewer`` started it, else None."""
    parsed = parse_id(job_id)
    if parsed is None:
        return None
    with read_connection() as conn:
        row = conn.execute(SQL, {"id": parsed, "user_id": viewer.user_id}).fetchone()
    if row is None:
        return None
    sample = tuple(SkippedTodo(item.get("id", ""), item.get("state")) for item in row.pop("skipped_sample") or ())
    return BulkJob(skipped_sample=sample, **row)

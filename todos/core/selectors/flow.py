"""The charts' numbers: completed, failed and died per interval, and how long work waited and ran.

Read from the relay's rollup (``todo_flow``, migration 0012), never from ``todos``: a chart reads
one row per (team, interval) — at most 168 × the viewer's teams — whatever the number of todos.
Percentiles come from the rollup's fixed histograms (six buckets per decade of seconds), estimated
inside the bucket geometrically: never more than one bucket (a factor of 1.47) from the exact
value, usually much closer.

Tenancy: only the viewer's teams' rows are read (``Viewer.team_ids``, their memberships).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import LiteralString

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer

HISTOGRAM_BUCKETS = 50
ALL_QUEUES = ""  # the rollup's row for every queue of a team (queue names are never empty)


def bucket_bounds(bucket: int) -> tuple[float, float]:
    """Seconds [low, high) of histogram bucket ``bucket`` (1-based), as ``flow_bucket`` in
    migration 0012 assigns them: six per decade from 10 ms."""
    return 10 ** ((bucket - 13) / 6), 10 ** ((bucket - 12) / 6)


def bucket_of(seconds: float) -> int:
    """The bucket ``flow_bucket`` puts ``seconds`` in (the tests hold the two to each other)."""
    if seconds < 0.01:
        return 1
    return min(HISTOGRAM_BUCKETS, max(1, math.floor(6 * math.log10(seconds)) + 13))


def percentile(histogram: list[int], p: float) -> float | None:
    """The ``p`` quantile (0 < p < 1) of the seconds counted in ``histogram``; None when empty."""
    total = sum(histogram)
    if not total:
        return None
    rank = p * total
    seen = 0
    for index, n in enumerate(histogram):
        if n and seen + n >= rank:
            low, high = bucket_bounds(index + 1)
            return low * (high / low) ** ((rank - seen) / n)
        seen += n
    return bucket_bounds(HISTOGRAM_BUCKETS)[1]  # not reached: rank <= total


@dataclass(frozen=True)
class Range:
    key: str
    label: str
    grain: LiteralString  # the rollup rows read: 'minute' or 'hour'
    step: timedelta  # one interval of the chart
    intervals: int

    @property
    def span(self) -> timedelta:
        return self.step * self.intervals


RANGES = {
    "1h": Range("1h", "Last hour", "minute", timedelta(minutes=1), 60),
    "24h": Range("24h", "Last 24 hours", "hour", timedelta(hours=1), 24),
    "7d": Range("7d", "Last 7 days", "hour", timedelta(hours=6), 28),
}
DEFAULT_RANGE = "1h"


@dataclass
class Interval:
    start: datetime
    completed: int = 0
    failed: int = 0
    died: int = 0
    waited: list[int] | None = None  # histogram
    ran: list[int] | None = None

    def add(self, completed: int, failed: int, died: int, waited: list[int], ran: list[int]) -> None:
        self.completed += completed
        self.failed += failed
        self.died += died
        self.waited = _added(self.waited, waited)
        self.ran = _added(self.ran, ran)

    def time(self, which: str, p: float) -> float | None:
        return percentile(getattr(self, which) or [], p)

    waited_p50 = property(lambda self: self.time("waited", 0.5))
    waited_p95 = property(lambda self: self.time("waited", 0.95))
    ran_p50 = property(lambda self: self.time("ran", 0.5))
    ran_p95 = property(lambda self: self.time("ran", 0.95))

    @property
    def waited_count(self) -> int:
        return sum(self.waited or ())

    @property
    def ran_count(self) -> int:
        return sum(self.ran or ())


def _added(a: list[int] | None, b: list[int]) -> list[int]:
    return list(b) if a is None else [x + y for x, y in zip(a, b)]


@dataclass
class Flow:
    range: Range
    queue: str  # ALL_QUEUES for every queue
    now: datetime
    intervals: list[Interval]
    total: Interval


BUCKETS_BREAK: LiteralString = ",\n                 "  # four buckets a line


def _bucket_sums(column: LiteralString) -> LiteralString:
    """``ARRAY[sum(f.col[1]), …, sum(f.col[50])]``: a histogram column summed bucket by bucket.
    Fifty plain aggregates over fixed-width array elements, not an unnest of every row (which
    costs a row per bucket and row read: 8,400 rows for a week of five teams)."""
    sums: list[LiteralString] = [f"sum(f.{column}[{compose.integer(b)}])" for b in range(1, HISTOGRAM_BUCKETS + 1)]
    lines: list[LiteralString] = [compose.join(", ", sums[i : i + 4]) for i in range(0, len(sums), 4)]
    return f"ARRAY[{compose.join(BUCKETS_BREAK, lines)}]::bigint[]"


# The clock and one row per interval of one chart, in one statement (one snapshot, the database's
# clock): the rollup rows since ``since`` before the current grain unit, summed per interval of
# ``step`` (aligned to the epoch). The database sums: the Board receives one row per interval.
FLOW_SQL: LiteralString = f"""
WITH clock AS (SELECT now() AS now, date_trunc(%(grain)s, now()) AS current)
SELECT c.now, c.current, k.at, k.completed, k.failed, k.died, k.waited, k.ran
FROM clock c LEFT JOIN LATERAL (
    SELECT date_bin(%(step)s::interval, f.at, timestamptz '1970-01-01 00:00:00+00') AS at,
           sum(f.completed)::bigint AS completed, sum(f.failed)::bigint AS failed, sum(f.died)::bigint AS died,
           {_bucket_sums("waited")} AS waited,
           {_bucket_sums("ran")} AS ran
    FROM todo_flow f
    WHERE f.team_id = ANY(%(teams)s::uuid[]) AND f.grain = %(grain)s AND f.queue = %(queue)s
      AND f.at > c.current - %(since)s::interval
    GROUP BY 1
) k ON true
ORDER BY k.at"""


def flow_params(viewer: Viewer, *, range_key: str, queue: str, teams=None) -> dict:
    """FLOW_SQL's parameters for one chart (the benchmark explains the same statement)."""
    span = RANGES[range_key]
    # The 7-day chart's intervals are six hours aligned to the epoch: read from the first hour of
    # the first one (up to five hours before the plain span).
    since = span.span + (span.step - timedelta(hours=1) if span.grain == "hour" else timedelta(0))
    return {
        "grain": span.grain,
        "step": span.step,
        "teams": [t for t in viewer.team_ids if teams is None or t in teams],
        "queue": queue,
        "since": since,
    }


def flow(viewer: Viewer, *, range_key: str = DEFAULT_RANGE, queue: str = ALL_QUEUES, teams=None) -> Flow:
    """One chart's data for ``viewer``: its teams (or those of ``teams`` among them), one queue or
    all. ``range_key`` is one of RANGES (the view checks it)."""
    span = RANGES[range_key]
    with read_connection() as conn:
        rows = conn.execute(FLOW_SQL, flow_params(viewer, range_key=range_key, queue=queue, teams=teams)).fetchall()
    now, current = rows[0]["now"], rows[0]["current"]
    step_seconds = span.step.total_seconds()
    last_start = datetime.fromtimestamp(current.timestamp() // step_seconds * step_seconds, tz=current.tzinfo)
    starts = [last_start - span.step * (span.intervals - 1 - i) for i in range(span.intervals)]
    intervals = [Interval(start) for start in starts]
    first = starts[0]
    total = Interval(first)
    for row in rows:
        if row["at"] is None or row["at"] < first:
            continue
        index = min(int((row["at"] - first).total_seconds() // step_seconds), span.intervals - 1)
        values = (row["completed"], row["failed"], row["died"], row["waited"], row["ran"])
        intervals[index].add(*values)
        total.add(*values)
    return Flow(range=span, queue=queue, now=now, intervals=intervals, total=total)


def queues(viewer: Viewer) -> list[str]:
    """The queue names the viewer's teams have chart rows for in the last week, to choose from."""
    with read_connection() as conn:
        rows = conn.execute(QUEUES_SQL, {"teams": viewer.team_ids}).fetchall()
    return [row["queue"] for row in rows]


# Distinct queues through the primary key, team by team (a loose index scan would be cheaper on
# huge tables; the hour rows of a week are at most 192 per queue).
QUEUES_SQL: LiteralString = """
SELECT DISTINCT queue FROM todo_flow
WHERE team_id = ANY(%(teams)s::uuid[]) AND grain = 'hour' AND queue <> ''
ORDER BY queue"""

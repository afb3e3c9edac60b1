"""The overview: one row per (team, queue) the viewer can see, with live counts and throughput.

Every number is exact and costs O(queues), whatever the number of todos:

* pending, scheduled, in flight, retry scheduled and dead letters are the relay's counts (``todo_counts``,
  kept by ``todos/live/relay.py`` from the change log, milliseconds behind the last commit);
* done and dead-lettered in the last hour, and the sparkline, are the relay's per-minute rollup
  (``todo_finished_minutes``): the hour is the last 60 minutes, to the minute;
* the oldest pending todo is one entry of ``todos_endpoint_queue_state_created`` per endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import TeamAccess, Viewer

BUCKET_SECONDS = 300
BUCKETS = 12  # the last hour in 5-minute buckets
MINUTES = 60

# One row per (team, queue) the viewer sees, in one statement (so one snapshot): the (endpoint,
# queue) pairs of the endpoints' scopes, of queues where work is live or dead (counts > 0), and of
# paused queues, grouped per team; their counts summed from todo_counts.
ROW_SQL: LiteralString = """
WITH visible AS (
    SELECT * FROM unnest(%(eps)s::uuid[], %(ep_teams)s::uuid[]) AS v(endpoint_id, team_id)
), counted AS (
    SELECT c.endpoint_id, c.queue, c.state, c.n FROM todo_counts c
    WHERE c.endpoint_id = ANY(%(eps)s::uuid[])
      AND c.state IN ('pending', 'blocked', 'scheduled', 'claimed', 'retry', 'dead')
), pair AS (
    SELECT * FROM unnest(%(scope_eps)s::uuid[], %(scope_queues)s::text[]) AS s(endpoint_id, queue)
    UNION SELECT endpoint_id, queue FROM counted WHERE n > 0
    UNION SELECT v.endpoint_id, qp.queue FROM queue_pauses qp JOIN visible v USING (team_id)
), team_queue AS (
    SELECT v.team_id, p.queue, array_agg(DISTINCT p.endpoint_id) AS eps,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0)::bigint AS pending,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'blocked'), 0)::bigint AS blocked,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'scheduled'), 0)::bigint AS scheduled,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'claimed'), 0)::bigint AS claimed,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'retry'), 0)::bigint AS retry,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'dead'), 0)::bigint AS dead
    FROM pair p JOIN visible v USING (endpoint_id)
    LEFT JOIN counted c ON c.endpoint_id = p.endpoint_id AND c.queue = p.queue
    GROUP BY v.team_id, p.queue
)
SELECT r.*,
       (SELECT min(o.created_at) FROM unnest(r.eps) AS e(id) CROSS JOIN LATERAL (
            SELECT t.created_at FROM todos t
            WHERE t.endpoint_id = e.id AND t.queue = r.queue AND t.state = 'pending' AND t.next_retry_at IS NULL
            ORDER BY t.created_at LIMIT 1) o) AS oldest_pending
FROM team_queue r"""

# The last hour's finished work from the per-minute rollup: per (endpoint, queue), done and
# dead-lettered, and the done ones per 5-minute bucket (0 = the newest) as two parallel arrays.
RECENT_SQL: LiteralString = f"""
SELECT endpoint_id, queue, sum(done)::bigint AS done, sum(dead)::bigint AS failed,
       array_agg(bucket) AS done_buckets, array_agg(done) AS done_counts
FROM (
    SELECT endpoint_id, queue, sum(done)::bigint AS done, sum(dead)::bigint AS dead,
           least(floor(date_part('epoch', date_trunc('minute', now()) - minute) / {compose.integer(BUCKET_SECONDS)}),
                 {compose.integer(BUCKETS - 1)})::int AS bucket
    FROM todo_finished_minutes
    WHERE endpoint_id = ANY(%(eps)s::uuid[])
      AND minute > date_trunc('minute', now()) - make_interval(mins => {compose.integer(MINUTES)})
    GROUP BY 1, 2, 5
) per_bucket
GROUP BY 1, 2"""

PAUSES_SQL: LiteralString = """
SELECT qp.team_id, qp.queue, qp.paused_at, qp.note, u.username AS paused_by
FROM queue_pauses qp LEFT JOIN auth_user u ON u.id = qp.paused_by
WHERE qp.team_id = ANY(%(teams)s::uuid[])"""


@dataclass
class Pause:
    by: str | None
    at: datetime
    note: str | None


@dataclass
class QueueStats:
    team: TeamAccess
    queue: str
    pending: int = 0
    blocked: int = 0  # waiting for parents (docs/lifecycle.md, "Dependencies")
    scheduled: int = 0
    claimed: int = 0
    retry: int = 0
    dead: int = 0
    done_hour: int = 0
    failed_hour: int = 0
    oldest_pending: datetime | None = None
    spark: list[int] = field(default_factory=lambda: [0] * BUCKETS)  # oldest bucket first
    pause: Pause | None = None

    def add(self, other: QueueStats) -> None:
        for name in ("pending", "blocked", "scheduled", "claimed", "retry", "dead", "done_hour", "failed_hour"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.oldest_pending and (self.oldest_pending is None or other.oldest_pending < self.oldest_pending):
            self.oldest_pending = other.oldest_pending
        self.spark = [a + b for a, b in zip(self.spark, other.spark)]

    @property
    def sparkline_points(self) -> str:
        """SVG polyline points (viewBox 0 0 60 16) for the completions per 5 minutes."""
        peak = max(self.spark) or 1
        step = 60 / (BUCKETS - 1)
        return " ".join(f"{i * step:.1f},{15 - 14 * v / peak:.1f}" for i, v in enumerate(self.spark))

    def shown(self, name: str) -> str:
        return f"{getattr(self, name):,}"

    pending_shown = property(lambda self: self.shown("pending"))
    dead_shown = property(lambda self: self.shown("dead"))
    done_hour_shown = property(lambda self: self.shown("done_hour"))
    failed_hour_shown = property(lambda self: self.shown("failed_hour"))

    @property
    def throughput(self) -> int:
        return sum(self.spark)


@dataclass
class Overview:
    rows: list[QueueStats]
    totals: QueueStats | None


def overview(viewer: Viewer) -> Overview:
    eps = viewer.endpoint_ids
    if not eps:
        return Overview([], None)
    scope = [(e.id, q) for e in viewer.endpoints for q in e.scope_queues]
    params = {
        "eps": eps,
        "ep_teams": [e.team_id for e in viewer.endpoints],
        "teams": viewer.team_ids,
        "scope_eps": [e for e, _ in scope],
        "scope_queues": [q for _, q in scope],
    }
    with read_connection() as conn:
        counted = conn.execute(ROW_SQL, params).fetchall()
        recent = conn.execute(RECENT_SQL, params).fetchall()
        pauses = conn.execute(PAUSES_SQL, params).fetchall()
    stats: dict[tuple[UUID, str], QueueStats] = {}

    def slot(team: TeamAccess | None, queue: str) -> QueueStats:
        assert team is not None  # every row read is on one of the viewer's teams
        key = (team.id, queue)
        if key not in stats:
            stats[key] = QueueStats(team=team, queue=queue)
        return stats[key]

    for row in counted:
        s = slot(viewer.team(row["team_id"]), row["queue"])
        s.pending, s.claimed, s.retry, s.dead = row["pending"], row["claimed"], row["retry"], row["dead"]
        s.scheduled, s.blocked = row["scheduled"], row["blocked"]
        s.oldest_pending = row["oldest_pending"]
    for row in recent:
        s = slot(viewer.team_of_endpoint(row["endpoint_id"]), row["queue"])
        s.done_hour += row["done"]
        s.failed_hour += row["failed"]  # dead-lettered in the last hour
        for bucket, n in zip(row["done_buckets"] or (), row["done_counts"] or ()):
            s.spark[BUCKETS - 1 - bucket] += n
    for row in pauses:
        slot(viewer.team(row["team_id"]), row["queue"]).pause = Pause(
            by=row["paused_by"], at=row["paused_at"], note=row["note"]
        )
    rows = sorted(stats.values(), key=lambda s: (s.team.name, s.team.slug, s.queue))
    # The totals row belongs to no team; the template shows no team for it.
    totals = QueueStats(team=None, queue="All queues")  # pyright: ignore[reportArgumentType]
    for s in rows:
        totals.add(s)
    return Overview(rows, totals if rows else None)

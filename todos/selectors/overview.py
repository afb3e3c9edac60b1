"""The overview: one row per (team, queue) the viewer can see, with live counts and throughput.

Every number comes from an index that bounds its cost by the live work, not the table:
pending (``todos_pending``), in flight (``todos_claimed``), retry scheduled (``todos_retry_due``),
dead letters (failed todos, index-only over ``todos_endpoint_queue_state_created``, minus the
retry scheduled ones), and the last hour's completions (``todos_completed``), which also feed the
sparkline.

Pending and dead letters are exact up to ``COUNT_CAP`` per row, that is per (team, queue) summed
over the team's endpoints, and read "1,000+" beyond it, as the todo list filtered to that team and
queue does. The totals row adds the rows up and carries a "+" when any row does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from todos.db import pool
from todos.selectors.access import TeamAccess, Viewer

BUCKET_SECONDS = 300
BUCKETS = 12  # the last hour in 5-minute buckets
COUNT_CAP = 1_000  # per (team, queue) and state, as on the todo list
RECENT_ROWS = 5_000  # finished todos read for the last hour's numbers ("5,000+" beyond)

# One row per (team, queue) the viewer sees, in one statement (so one snapshot). What it reads:
# * the (endpoint, queue) pairs: the endpoints' scopes, plus queues where work is in flight
#   (todos_claimed: bounded by the workers) or waits for a retry (todos_retry_due: a small partial
#   index), plus paused queues; in flight and retry scheduled are counted exactly from those sets;
# * pending and dead letters: one LATERAL branch per endpoint of the row, each an index-only scan
#   ordered as its index is (so the planner cannot swap in a sequential scan hunting for a rare
#   state), all under one outer LIMIT: a row reads at most COUNT_CAP + 1 entries (%(cap)s) however
#   many endpoints it has. Pending walks todos_pending;
# * dead letters are failed todos without a retry window, and which is which lives in the heap
#   (next_retry_at). So they are counted as failed todos, index-only over
#   todos_endpoint_queue_state_created, over LIMIT COUNT_CAP + 1 + retry, minus the row's retry
#   scheduled ones: exact up to COUNT_CAP, and more than that when the LIMIT is reached;
# * the oldest pending todo: one index entry per endpoint (todos_endpoint_queue_state_created).
ROW_SQL = """
WITH visible AS (
    SELECT * FROM unnest(%(eps)s::uuid[], %(ep_teams)s::uuid[]) AS v(endpoint_id, team_id)
), claimed AS (
    SELECT t.endpoint_id, t.queue, count(*) AS n FROM todos t
    WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
    GROUP BY 1, 2
), retry AS (
    SELECT t.endpoint_id, t.queue, count(*) AS n FROM todos t
    WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.endpoint_id = ANY(%(eps)s::uuid[])
    GROUP BY 1, 2
), pair AS (
    SELECT * FROM unnest(%(scope_eps)s::uuid[], %(scope_queues)s::text[]) AS s(endpoint_id, queue)
    UNION SELECT endpoint_id, queue FROM claimed
    UNION SELECT endpoint_id, queue FROM retry
    UNION SELECT v.endpoint_id, qp.queue FROM queue_pauses qp JOIN visible v USING (team_id)
), team_queue AS (
    SELECT v.team_id, p.queue, array_agg(p.endpoint_id) AS eps,
           coalesce(sum(c.n), 0)::int AS claimed, coalesce(sum(r.n), 0)::int AS retry
    FROM pair p JOIN visible v USING (endpoint_id)
    LEFT JOIN claimed c USING (endpoint_id, queue) LEFT JOIN retry r USING (endpoint_id, queue)
    GROUP BY v.team_id, p.queue
)
SELECT r.team_id, r.queue, r.claimed, r.retry,
       (SELECT count(*) FROM (
            SELECT FROM unnest(r.eps) AS e(id) CROSS JOIN LATERAL (
                SELECT FROM todos t WHERE t.endpoint_id = e.id AND t.queue = r.queue AND t.state = 'pending'
                ORDER BY t.priority, t.created_at LIMIT %(cap)s) branch
            LIMIT %(cap)s) c) AS pending,
       (SELECT count(*) FROM (
            SELECT FROM unnest(r.eps) AS e(id) CROSS JOIN LATERAL (
                SELECT FROM todos t WHERE t.endpoint_id = e.id AND t.queue = r.queue AND t.state = 'failed'
                ORDER BY t.created_at LIMIT %(cap)s + r.retry) branch
            LIMIT %(cap)s + r.retry) c) - r.retry AS dead,
       (SELECT min(o.created_at) FROM unnest(r.eps) AS e(id) CROSS JOIN LATERAL (
            SELECT t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.queue = r.queue AND t.state = 'pending'
            ORDER BY t.created_at LIMIT 1) o) AS oldest_pending
FROM team_queue r"""

# The last hour's finished work, newest first, at most RECENT_ROWS rows (todos_completed): enough
# for a sparkline and "done in the last hour" up to that many; beyond it the numbers say "+".
# One row per (endpoint, queue): done and dead-lettered (failed), the done ones per 5-minute bucket
# (0 = the newest) as two parallel arrays, and how many rows it read (canceled ones included).
RECENT_SQL = f"""
SELECT endpoint_id, queue,
       coalesce(sum(n) FILTER (WHERE state = 'done'), 0) AS done,
       coalesce(sum(n) FILTER (WHERE state = 'failed'), 0) AS failed,
       array_agg(bucket) FILTER (WHERE state = 'done') AS done_buckets,
       array_agg(n) FILTER (WHERE state = 'done') AS done_counts,
       sum(n) AS scanned
FROM (
    SELECT endpoint_id, queue, state,
           least(floor(date_part('epoch', now() - completed_at) / {BUCKET_SECONDS}), {BUCKETS - 1})::int AS bucket,
           count(*)::int AS n
    FROM (
        SELECT t.endpoint_id, t.queue, t.state, t.completed_at FROM todos t
        WHERE t.completed_at > now() - interval '1 hour' AND t.endpoint_id = ANY(%(eps)s::uuid[])
        ORDER BY t.completed_at DESC LIMIT %(recent)s
    ) recent
    GROUP BY 1, 2, 3, 4
) per_bucket
GROUP BY 1, 2"""

PAUSES_SQL = """
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
    claimed: int = 0
    retry: int = 0
    dead: int = 0
    done_hour: int = 0
    failed_hour: int = 0
    oldest_pending: datetime | None = None
    capped: set = field(default_factory=set)  # numbers that stopped at their cap: shown with "+"
    spark: list[int] = field(default_factory=lambda: [0] * BUCKETS)  # oldest bucket first
    pause: Pause | None = None

    def add(self, other: "QueueStats") -> None:
        for name in ("pending", "claimed", "retry", "dead", "done_hour", "failed_hour"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.capped |= other.capped
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
        value = f"{getattr(self, name):,}"
        return value + "+" if name in self.capped else value

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
        "eps": eps, "ep_teams": [e.team_id for e in viewer.endpoints], "teams": viewer.team_ids,
        "scope_eps": [e for e, _ in scope], "scope_queues": [q for _, q in scope],
        "cap": COUNT_CAP + 1, "recent": RECENT_ROWS,
    }
    with pool().connection() as conn:
        counted = conn.execute(ROW_SQL, params).fetchall()
        recent = conn.execute(RECENT_SQL, params).fetchall()
        pauses = conn.execute(PAUSES_SQL, params).fetchall()
    stats: dict[tuple[UUID, str], QueueStats] = {}

    def slot(team: TeamAccess, queue: str) -> QueueStats:
        key = (team.id, queue)
        if key not in stats:
            stats[key] = QueueStats(team=team, queue=queue)
        return stats[key]

    for row in counted:
        s = slot(viewer.team(row["team_id"]), row["queue"])
        s.pending, s.dead = min(row["pending"], COUNT_CAP), min(row["dead"], COUNT_CAP)
        s.capped = {name for name in ("pending", "dead") if row[name] > COUNT_CAP}
        s.claimed, s.retry, s.oldest_pending = row["claimed"], row["retry"], row["oldest_pending"]
    recent_capped = sum(row["scanned"] for row in recent) >= RECENT_ROWS
    for row in recent:
        s = slot(viewer.team_of_endpoint(row["endpoint_id"]), row["queue"])
        if recent_capped:
            s.capped |= {"done_hour", "failed_hour"}
        s.done_hour += row["done"]
        s.failed_hour += row["failed"]  # dead-lettered in the last hour
        for bucket, n in zip(row["done_buckets"] or (), row["done_counts"] or ()):
            s.spark[BUCKETS - 1 - bucket] += n
    for row in pauses:
        slot(viewer.team(row["team_id"]), row["queue"]).pause = Pause(by=row["paused_by"], at=row["paused_at"], note=row["note"])
    rows = sorted(stats.values(), key=lambda s: (s.team.name, s.team.slug, s.queue))
    totals = QueueStats(team=None, queue="All queues")  # type: ignore[arg-type]
    for s in rows:
        totals.add(s)
    return Overview(rows, totals if rows else None)

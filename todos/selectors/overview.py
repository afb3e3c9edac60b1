"""The overview: one row per (team, queue) the viewer can see, with live counts and throughput.

Every number comes from an index that bounds its cost by the live work, not the table:
pending (``todos_pending``), in flight (``todos_claimed``), retry scheduled (``todos_retry_due``),
dead letters (index-only over ``todos_endpoint_queue_state_created``), and the last hour's
completions (``todos_completed``), which also feed the sparkline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from todos.db import pool
from todos.selectors.access import TeamAccess, Viewer

BUCKET_SECONDS = 300
BUCKETS = 12  # the last hour in 5-minute buckets
COUNT_CAP = 1_000  # per queue and state, as on the todo list
RECENT_ROWS = 5_000  # finished todos read for the last hour's numbers ("5,000+" beyond)

# Per (endpoint, queue): counts over an ordered LIMIT cap + 1 (exact up to the cap; the ORDER BY
# keeps the planner on todos_endpoint_queue_state_created, which stops after cap entries, instead
# of a sequential scan hunting for a rare state), leases exactly, and the oldest pending todo.
# Queues a human can see beyond the endpoints' scopes: where work is in flight or waiting for a
# retry (both small, partial-indexed sets) and what is paused.
EXTRA_PAIRS_SQL = """
SELECT DISTINCT t.endpoint_id, t.queue FROM todos t
WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
UNION
SELECT t.endpoint_id, t.queue FROM todos t
WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.endpoint_id = ANY(%(eps)s::uuid[])
UNION
SELECT e.id, qp.queue FROM queue_pauses qp JOIN endpoints e ON e.team_id = qp.team_id
WHERE e.id = ANY(%(eps)s::uuid[])"""

PAIR_SQL = """
SELECT p.endpoint_id, p.queue,
       (SELECT count(*) FROM (SELECT 1 FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue
            AND t.state = 'pending' ORDER BY t.created_at LIMIT %(cap)s) c) AS pending,
       (SELECT count(*) FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue AND t.state = 'claimed') AS claimed,
       (SELECT count(*) FROM (SELECT 1 FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue
            AND t.state = 'failed' AND t.next_retry_at IS NULL ORDER BY t.created_at LIMIT %(cap)s) c) AS dead,
       (SELECT t.created_at FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue AND t.state = 'pending'
        ORDER BY t.created_at LIMIT 1) AS oldest_pending
FROM unnest(%(pair_eps)s::uuid[], %(pair_queues)s::text[]) AS p(endpoint_id, queue)"""

RETRY_SQL = """
SELECT t.endpoint_id, t.queue, count(*) AS n FROM todos t
WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.endpoint_id = ANY(%(eps)s::uuid[])
GROUP BY 1, 2"""

# The last hour's finished work, newest first, at most RECENT_ROWS rows (todos_completed): enough
# for a sparkline and "done in the last hour" up to that many; beyond it the numbers say "+".
RECENT_SQL = f"""
WITH recent AS (
    SELECT t.endpoint_id, t.queue, t.state, t.completed_at FROM todos t
    WHERE t.completed_at > now() - interval '1 hour' AND t.endpoint_id = ANY(%(eps)s::uuid[])
    ORDER BY t.completed_at DESC LIMIT %(recent)s
)
SELECT endpoint_id, queue, state,
       least(floor(extract(epoch FROM now() - completed_at) / {BUCKET_SECONDS}), {BUCKETS - 1})::int AS bucket,
       count(*) AS n, (SELECT count(*) FROM recent) AS scanned
FROM recent
GROUP BY 1, 2, 3, 4"""

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
    params = {"eps": eps, "teams": viewer.team_ids, "cap": COUNT_CAP + 1, "recent": RECENT_ROWS}
    with pool().connection() as conn:
        wanted = {(e.id, q) for e in viewer.endpoints for q in e.scope_queues}
        wanted |= {(r["endpoint_id"], r["queue"]) for r in conn.execute(EXTRA_PAIRS_SQL, params).fetchall()}
        ordered = sorted(wanted, key=lambda pair: (str(pair[0]), pair[1]))
        params.update(pair_eps=[e for e, _ in ordered], pair_queues=[q for _, q in ordered])
        pairs = conn.execute(PAIR_SQL, params).fetchall()
        retries = conn.execute(RETRY_SQL, params).fetchall()
        recent = conn.execute(RECENT_SQL, params).fetchall()
        pauses = conn.execute(PAUSES_SQL, params).fetchall()
    stats: dict[tuple[UUID, str], QueueStats] = {}

    def slot(endpoint_id, queue) -> QueueStats:
        team = viewer.team_of_endpoint(endpoint_id)
        key = (team.id, queue)
        if key not in stats:
            stats[key] = QueueStats(team=team, queue=queue)
        return stats[key]

    retry_by_pair = {(r["endpoint_id"], r["queue"]): r["n"] for r in retries}
    for row in pairs:
        s = QueueStats(team=viewer.team_of_endpoint(row["endpoint_id"]), queue=row["queue"])
        s.pending, s.claimed, s.dead = min(row["pending"], COUNT_CAP), row["claimed"], min(row["dead"], COUNT_CAP)
        s.capped = {name for name in ("pending", "dead") if row[name] > COUNT_CAP}
        s.retry = retry_by_pair.get((row["endpoint_id"], row["queue"]), 0)
        s.oldest_pending = row["oldest_pending"]
        slot(row["endpoint_id"], row["queue"]).add(s)
    recent_capped = bool(recent) and recent[0]["scanned"] >= RECENT_ROWS
    for row in recent:
        s = slot(row["endpoint_id"], row["queue"])
        if recent_capped:
            s.capped |= {"done_hour", "failed_hour"}
        if row["state"] == "done":
            s.done_hour += row["n"]
            s.spark[BUCKETS - 1 - row["bucket"]] += row["n"]
        elif row["state"] == "failed":
            s.failed_hour += row["n"]  # dead-lettered in the last hour
    for row in pauses:
        team = viewer.team(row["team_id"])
        key = (team.id, row["queue"])
        if key not in stats:
            stats[key] = QueueStats(team=team, queue=row["queue"])
        stats[key].pause = Pause(by=row["paused_by"], at=row["paused_at"], note=row["note"])
    rows = sorted(stats.values(), key=lambda s: (s.team.name, s.team.slug, s.queue))
    totals = QueueStats(team=None, queue="All queues")  # type: ignore[arg-type]
    for s in rows:
        totals.add(s)
    return Overview(rows, totals if rows else None)

"""Numbers for ``/metrics`` (Prometheus): the whole installation, every query index-bounded, all
read in one snapshot per scrape (one REPEATABLE READ transaction), so the families agree.

Todos per Board state are the relay's exact counts (``todo_counts``); lapsed leases and due retries
are counted through their partial indexes; the relay's own health is read from ``relay_state`` and
the size of the change log it has not drained yet. Terminal work is reported as "finished in the
last hour" through ``todos_endpoint_finished``, one endpoint at a time, rather than as an
ever-growing total; attempts closed in the last hour come from
``todo_attempts_endpoint_ended`` one endpoint at a time (humans' attempts under ``NULL``).

Per queue (summed over teams): the relay's counts by state, and the running totals of the charts'
rollup (``todo_flow_totals``, migration 0021): attempts completed, failed and died, and the
histograms of waiting and running times. Both read rows per (endpoint or team, queue), never todos.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import LiteralString

from todos.core.db import single_row
from todos.core.replica import read_connection
from todos.core.selectors.flow import HISTOGRAM_BUCKETS

SQL: dict[str, LiteralString] = {
    "live": """
SELECT (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'pending')::bigint AS pending,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'claimed')::bigint AS claimed,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'retry')::bigint AS retry_scheduled,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'dead')::bigint AS dead_letter,
       (SELECT count(*) FROM todos WHERE state = 'claimed' AND lease_expires_at < now()) AS lease_lapsed,
       (SELECT count(*) FROM todos WHERE state = 'failed' AND next_retry_at <= now()) AS retry_due,
       (SELECT count(*) FROM change_log) AS change_log_rows,
       (SELECT extract(epoch FROM now() - alive_at) FROM relay_state) AS relay_alive_age,
       (SELECT counts_stale FROM relay_state) AS counts_stale,
       (SELECT count(*) FROM queue_pauses) AS queue_pauses,
       (SELECT reltuples::bigint FROM pg_class WHERE oid = 'todos'::regclass) AS rows_estimate""",
    "oldest": """
SELECT extract(epoch FROM now() - min(o.created_at)) AS age FROM endpoints e
CROSS JOIN LATERAL (
    SELECT t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.state = 'pending'
    ORDER BY t.created_at LIMIT 1) o""",
    "finished": """
SELECT f.state, count(*) AS n FROM endpoints e
CROSS JOIN LATERAL (
    SELECT t.state FROM todos t WHERE t.endpoint_id = e.id AND t.completed_at > now() - interval '1 hour') f
GROUP BY f.state""",
    "attempts": """
SELECT o.outcome, sum(o.n)::bigint AS n FROM (
    SELECT e.id FROM endpoints e UNION ALL SELECT NULL::uuid
) e(id)
CROSS JOIN LATERAL (
    SELECT a.outcome, count(*) AS n FROM todo_attempts a
    WHERE a.claimer_endpoint_id IS NOT DISTINCT FROM e.id AND a.ended_at > now() - interval '1 hour'
    GROUP BY a.outcome) o
GROUP BY o.outcome""",
    "endpoints": "SELECT state, count(*) AS n FROM endpoints GROUP BY state",
    "queue_states": """
SELECT queue, state, sum(n)::bigint AS n FROM todo_counts
WHERE state IN ('pending', 'claimed', 'retry', 'dead') GROUP BY queue, state""",
    "queue_totals": """
SELECT queue, completed, failed, died, waited, ran FROM todo_flow_totals""",
}


@dataclass
class QueueTotals:
    """One queue's running totals over every team (or several queues' folded together)."""

    completed: int = 0
    failed: int = 0
    died: int = 0
    waited: list[int] = field(default_factory=lambda: [0] * HISTOGRAM_BUCKETS)
    ran: list[int] = field(default_factory=lambda: [0] * HISTOGRAM_BUCKETS)

    def add(self, other: QueueTotals) -> None:
        self.completed += other.completed
        self.failed += other.failed
        self.died += other.died
        self.waited = [a + b for a, b in zip(self.waited, other.waited, strict=True)]
        self.ran = [a + b for a, b in zip(self.ran, other.ran, strict=True)]


def _queue_totals(rows: list[dict]) -> dict[str, QueueTotals]:
    totals: dict[str, QueueTotals] = {}
    for row in rows:
        one = QueueTotals(row["completed"], row["failed"], row["died"], list(row["waited"]), list(row["ran"]))
        totals.setdefault(row["queue"], QueueTotals()).add(one)
    return totals


def snapshot() -> dict:
    """Everything one scrape shows, read in one snapshot."""
    with read_connection() as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        live = conn.execute(SQL["live"]).fetchone()
        oldest = single_row(conn.execute(SQL["oldest"]))["age"]
        finished = {r["state"]: r["n"] for r in conn.execute(SQL["finished"]).fetchall()}
        attempts = {r["outcome"]: r["n"] for r in conn.execute(SQL["attempts"]).fetchall()}
        endpoints = {r["state"]: r["n"] for r in conn.execute(SQL["endpoints"]).fetchall()}
        queue_states: dict[str, dict[str, int]] = {}
        for r in conn.execute(SQL["queue_states"]).fetchall():
            queue_states.setdefault(r["queue"], {})[r["state"]] = r["n"]
        queue_totals = _queue_totals(conn.execute(SQL["queue_totals"]).fetchall())
    return {
        "queue_states": queue_states,
        "queue_totals": queue_totals,
        "live": live,
        "oldest": float(oldest) if oldest is not None else 0.0,
        "finished": finished,
        "attempts": attempts,
        "endpoints": endpoints,
    }

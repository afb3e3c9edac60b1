"""Numbers for ``/metrics`` (Prometheus): the whole installation, every query index-bounded.

Live sets are counted exactly through their partial indexes (pending, in flight, retry
scheduled); terminal work is reported as "finished in the last hour" through ``todos_completed``
rather than as an ever-growing total; attempts closed in the last hour come from
``todo_attempts_endpoint_ended`` one endpoint at a time (humans' attempts under ``NULL``).
"""

from __future__ import annotations

from todos.db import pool

SQL = {
    "live": """
SELECT (SELECT count(*) FROM todos WHERE state = 'pending') AS pending,
       (SELECT count(*) FROM todos WHERE state = 'claimed') AS claimed,
       (SELECT count(*) FROM todos WHERE state = 'claimed' AND lease_expires_at < now()) AS lease_lapsed,
       (SELECT count(*) FROM todos WHERE state = 'failed' AND next_retry_at IS NOT NULL) AS retry_scheduled,
       (SELECT count(*) FROM todos WHERE state = 'failed' AND next_retry_at <= now()) AS retry_due,
       (SELECT count(*) FROM queue_pauses) AS queue_pauses,
       (SELECT reltuples::bigint FROM pg_class WHERE oid = 'todos'::regclass) AS rows_estimate""",
    "oldest": """
SELECT extract(epoch FROM now() - min(o.created_at)) AS age FROM endpoints e
CROSS JOIN LATERAL (
    SELECT t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.state = 'pending'
    ORDER BY t.created_at LIMIT 1) o""",
    "finished": """
SELECT state, count(*) AS n FROM todos
WHERE completed_at > now() - interval '1 hour' GROUP BY state""",
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
}


def snapshot() -> dict:
    with pool().connection() as conn:
        live = conn.execute(SQL["live"]).fetchone()
        oldest = conn.execute(SQL["oldest"]).fetchone()["age"]
        finished = {r["state"]: r["n"] for r in conn.execute(SQL["finished"]).fetchall()}
        attempts = {r["outcome"]: r["n"] for r in conn.execute(SQL["attempts"]).fetchall()}
        endpoints = {r["state"]: r["n"] for r in conn.execute(SQL["endpoints"]).fetchall()}
    return {"live": live, "oldest": float(oldest) if oldest is not None else 0.0, "finished": finished, "attempts": attempts, "endpoints": endpoints}

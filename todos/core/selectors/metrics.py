"""Numbers for ``/metrics`` (Prometheus): the whole installation, every query index-bounded.

Todos per Board state are the relay's exact counts (``todo_counts``); lapsed leases and due retries
are counted through their partial indexes; the relay's own health is read from ``relay_state`` and
the size of the change log it has not drained yet. Terminal work is reported as "finished in the
last hour" through ``todos_completed`` rather than as an ever-growing total; attempts closed in the last hour come from
``todo_attempts_endpoint_ended`` one endpoint at a time (humans' attempts under ``NULL``).
"""

from __future__ import annotations

from typing import LiteralString

from todos.core.db import single_row
from todos.core.replica import read_connection

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
    with read_connection() as conn:
        live = conn.execute(SQL["live"]).fetchone()
        oldest = single_row(conn.execute(SQL["oldest"]))["age"]
        finished = {r["state"]: r["n"] for r in conn.execute(SQL["finished"]).fetchall()}
        attempts = {r["outcome"]: r["n"] for r in conn.execute(SQL["attempts"]).fetchall()}
        endpoints = {r["state"]: r["n"] for r in conn.execute(SQL["endpoints"]).fetchall()}
    return {
        "live": live,
        "oldest": float(oldest) if oldest is not None else 0.0,
        "finished": finished,
        "attempts": attempts,
        "endpoints": endpoints,
    }

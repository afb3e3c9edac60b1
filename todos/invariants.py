"""The invariants, as queries: the rows that break them (none, always).

* The lifecycle: a claimed todo has exactly one open attempt, and it is the todo's latest (``seq =
  attempts_total``); any other todo has none; no attempt is numbered past the todo's count.
  lifecycle.md states it; the deferred exclusion constraint enforces the "one open attempt" half at
  commit.
* The counts: for every (endpoint, queue, Board state), the relay's count plus the changes still
  waiting in the change log equals the number of todos. It holds in every snapshot, whether or not
  a relay is running, because a relay pass applies and deletes log rows in one transaction. (After
  the log was capped, ``relay_state.counts_stale`` is set and it is broken until the next pass
  rebuilds the counts.)

The tests check both after every test, and the benchmarks after every drain.
"""

from __future__ import annotations

BROKEN_LIFECYCLE_SQL = """
SELECT t.id, t.state, o.n AS open_attempts
FROM todos t
CROSS JOIN LATERAL (SELECT count(*) AS n FROM todo_attempts a WHERE a.todo_id = t.id AND a.ended_at IS NULL) o
WHERE (t.state = 'claimed' AND o.n <> 1) OR (t.state <> 'claimed' AND o.n <> 0)
   OR (t.state = 'claimed' AND NOT EXISTS (
        SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq = t.attempts_total AND a.ended_at IS NULL))
   OR EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq > t.attempts_total)
"""

# Log rows of an endpoint deleted since are left out: its todos and counts went with it.
BROKEN_COUNTS_SQL = """
WITH actual AS (
    SELECT endpoint_id, queue, todo_board_state(state, next_retry_at) AS state, count(*) AS n
    FROM todos GROUP BY 1, 2, 3
), pending_log AS (
    SELECT c.endpoint_id, c.queue, s.state, sum(s.d) AS n
    FROM change_log c JOIN endpoints e ON e.id = c.endpoint_id
    CROSS JOIN LATERAL (VALUES (c.state_before, -1), (c.state_after, 1)) AS s(state, d)
    WHERE c.todo_id IS NOT NULL AND s.state IS NOT NULL
    GROUP BY 1, 2, 3
), counted AS (
    SELECT k.endpoint_id, k.queue, k.state, sum(k.n) AS n FROM (
        SELECT endpoint_id, queue, state, n FROM todo_counts
        UNION ALL SELECT endpoint_id, queue, state, n FROM pending_log
    ) k GROUP BY 1, 2, 3
)
SELECT coalesce(a.endpoint_id, c.endpoint_id) AS endpoint_id, coalesce(a.queue, c.queue) AS queue,
       coalesce(a.state, c.state) AS state, coalesce(a.n, 0) AS todos, coalesce(c.n, 0) AS counted
FROM actual a FULL JOIN counted c USING (endpoint_id, queue, state)
WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)
"""


def broken_lifecycle(conn) -> list[dict]:
    """Every todo that breaks the lifecycle invariant, on ``conn`` (a dict-row psycopg
    connection). A full scan: for tests, benchmarks and an operator's check, not for a page."""
    return conn.execute(BROKEN_LIFECYCLE_SQL).fetchall()


def broken_counts(conn) -> list[dict]:
    """Every (endpoint, queue, state) whose count, with the log not yet relayed, is not the
    number of todos. A full scan, like :func:`broken_lifecycle`."""
    return conn.execute(BROKEN_COUNTS_SQL).fetchall()

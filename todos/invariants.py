"""The lifecycle invariant, as one query: the rows that break it (none, always).

A claimed todo has exactly one open attempt, and it is the todo's latest (``seq =
attempts_total``); any other todo has none; no attempt is numbered past the todo's count.
lifecycle.md states it; the deferred exclusion constraint enforces the "one open attempt" half at
commit. The tests check it after every test, and the benchmarks after every drain.
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


def broken_lifecycle(conn) -> list[dict]:
    """Every todo that breaks the invariant, on ``conn`` (a dict-row psycopg connection). A full
    scan: for tests, benchmarks and an operator's check, not for a page."""
    return conn.execute(BROKEN_LIFECYCLE_SQL).fetchall()

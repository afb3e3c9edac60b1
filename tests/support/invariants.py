"""The invariants, as queries: the rows that break them (none, always).

* The lifecycle: a claimed todo has exactly one open attempt, and it is the todo's latest (``seq =
  attempts_total``); any other todo has none; no attempt is numbered past the todo's count.
  docs/lifecycle.md ("Transitions") states it; the deferred exclusion constraint enforces the "one
  open attempt" half at commit.
* The counts: for every (endpoint, queue, Board state), the relay's count plus the changes still
  waiting in the change log equals the number of todos. It holds in every snapshot, whether or not
  a relay is running, because a relay pass applies and deletes log rows in one transaction. (After
  the log was capped, ``relay_state.counts_stale`` is set and it is broken until the next pass
  rebuilds the counts.)

The tests check both after every test, and the benchmarks after every drain.
"""

from __future__ import annotations

from typing import LiteralString

BROKEN_LIFECYCLE_SQL: LiteralString = """
SELECT t.id, t.state, o.n AS open_attempts
FROM todos t
CROSS JOIN LATERAL (SELECT count(*) AS n FROM todo_attempts a WHERE a.todo_id = t.id AND a.ended_at IS NULL) o
WHERE (t.state = 'claimed' AND o.n <> 1) OR (t.state <> 'claimed' AND o.n <> 0)
   OR (t.state = 'claimed' AND NOT EXISTS (
        SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq = t.attempts_total AND a.ended_at IS NULL))
   OR EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq > t.attempts_total)
"""


def broken_lifecycle(conn) -> list[dict]:
    """Every todo that breaks the lifecycle invariant, on ``conn`` (a dict-row psycopg
    connection). A full scan: for tests, benchmarks and an operator's check, not for a page."""
    return conn.execute(BROKEN_LIFECYCLE_SQL).fetchall()


# Concurrency keys: every key's ``claimed`` is the number of its team's claimed todos carrying it.
BROKEN_SLOTS_SQL: LiteralString = """
WITH actual AS (
    SELECT e.team_id, t.concurrency_key AS key, count(*) AS n
    FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.state = 'claimed' AND t.concurrency_key IS NOT NULL
    GROUP BY 1, 2
)
SELECT coalesce(k.team_id, a.team_id) AS team_id, coalesce(k.key, a.key) AS key,
       k.claimed AS was, coalesce(a.n, 0) AS now
FROM concurrency_keys k FULL JOIN actual a ON a.team_id = k.team_id AND a.key = k.key
WHERE coalesce(k.claimed, 0) <> coalesce(a.n, 0)
"""


def broken_slots(conn) -> list[dict]:
    """Every concurrency key whose slot count is not its number of claimed todos."""
    return conn.execute(BROKEN_SLOTS_SQL).fetchall()


def broken_counts(conn) -> list[dict]:
    """Every (endpoint, queue, state) whose count, with the log not yet relayed, is not the
    number of todos (``was`` counted, ``now`` todos): the relay's own drift query, which
    ``manage.py recount`` reports. A full scan, like :func:`broken_lifecycle`."""
    from todos.live.relay import DRIFT_SQL

    return conn.execute(DRIFT_SQL).fetchall()


# Dependencies (docs/lifecycle.md, "Dependencies"), four ways to break them:
# * a blocked todo with nothing left to wait for: no count, or every parent settled or done;
# * a pending todo that is not blocked yet still counts parents (an unblock that lost its time);
# * a blocked ``cancel`` child one of whose parents is dead or canceled (a cascade that missed it);
# * a parent that a child still waits for, not marked ``has_children`` (its complete would not
#   settle the child).
# Each starts from the dependency rows (one index probe when a test wrote none).
BROKEN_DEPENDENCIES_SQL: LiteralString = """
SELECT c.id, 'blocked with nothing to wait for' AS why
FROM todos c
WHERE c.state = 'pending' AND c.next_retry_at = 'infinity'
  AND (c.parents_left <= 0 OR NOT EXISTS (
        SELECT 1 FROM todo_dependencies d JOIN todos p ON p.id = d.parent_id
        WHERE d.child_id = c.id AND NOT d.settled AND p.state <> 'done'))
UNION ALL
SELECT c.id, 'unblocked but counting parents'
FROM todos c
WHERE c.parents_left > 0 AND c.state = 'pending' AND c.next_retry_at IS DISTINCT FROM 'infinity'
UNION ALL
SELECT DISTINCT c.id, 'blocked behind a dead or canceled parent'
FROM todo_dependencies d JOIN todos c ON c.id = d.child_id JOIN todos p ON p.id = d.parent_id
WHERE c.state = 'pending' AND c.next_retry_at = 'infinity' AND c.on_parent_failure = 'cancel'
  AND (p.state = 'canceled' OR (p.state = 'failed' AND p.next_retry_at IS NULL))
UNION ALL
SELECT DISTINCT p.id, 'a parent not marked has_children'
FROM todo_dependencies d JOIN todos p ON p.id = d.parent_id
WHERE NOT d.settled AND NOT p.has_children
"""


def broken_dependencies(conn) -> list[dict]:
    """Every todo that breaks a dependency rule."""
    return conn.execute(BROKEN_DEPENDENCIES_SQL).fetchall()

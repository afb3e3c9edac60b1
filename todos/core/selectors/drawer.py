"""The todo drawer's reads: the todo, its attempt history, the human actions on it.

Each read is scoped to the viewer's endpoints (or teams) in its own WHERE clause, so a drawer
for another team's todo reads nothing at all.
"""

from __future__ import annotations

import dataclasses
from typing import LiteralString

from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.rows import AUDIT_COLUMNS, LAPSED, ROW_SELECT, AttemptRow, AuditRow, TodoDetail, TodoRow

ATTEMPTS_SHOWN = 50
AUDIT_SHOWN = 100

DETAIL_SQL: LiteralString = f"""
SELECT {ROW_SELECT},
       {LAPSED},
       t.source, t.payload, t.idempotency_key, t.attempts_pruned, t.result, t.parents_left, t.on_parent_failure,
       e.team_id,
       EXISTS (SELECT 1 FROM queue_pauses qp WHERE qp.team_id = e.team_id AND qp.queue = t.queue) AS paused,
       t.timeout_seconds, lim.seconds AS run_time_limit,
       CASE WHEN t.state = 'claimed' THEN t.claimed_at + make_interval(secs => lim.seconds) END AS run_time_ends_at,
       t.rate_key, t.traceparent,
       (SELECT rl.allowance || ' per ' || rl.per FROM rate_limits rl
        WHERE rl.team_id = e.team_id AND rl.key = t.rate_key) AS rate_limit
FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
-- the limit that applies: the todo's own, else its team's default for the queue
CROSS JOIN LATERAL (
    SELECT coalesce(t.timeout_seconds, (
        SELECT qs.timeout_seconds FROM queue_settings qs
        WHERE qs.team_id = e.team_id AND qs.queue = t.queue)) AS seconds
) lim
WHERE t.id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])"""


def get_detail(viewer: Viewer, todo_id: str) -> TodoDetail | None:
    if not viewer.endpoint_ids or not isinstance(todo_id, str) or len(todo_id) > 64:
        return None
    with read_connection() as conn:
        row = conn.execute(DETAIL_SQL, {"id": todo_id, "eps": viewer.endpoint_ids}).fetchone()
    return TodoDetail(**{f.name: row[f.name] for f in dataclasses.fields(TodoDetail)}) if row else None


# Never the lease token hash, the claimer session or the claimer endpoint id.
ATTEMPTS_SQL: LiteralString = """
SELECT a.seq, a.attempt, a.claimer_kind, a.owner, a.claimant, a.claimed_at, a.last_heartbeat_at,
       a.lease_expires_at, a.ended_at, a.outcome, a.disposition, a.summary, a.summary_truncated,
       a.artifact, a.ended_by, a.error, a.traceparent,
       (a.ended_at IS NULL AND a.lease_expires_at < now()) AS lease_lapsed
FROM todo_attempts a
WHERE a.todo_id = %(id)s
ORDER BY a.seq DESC
LIMIT %(limit)s"""


def attempts(todo: TodoRow, *, limit: int = ATTEMPTS_SHOWN) -> list[AttemptRow]:
    """The attempt history, newest first, open attempt included. ``todo`` comes from
    :func:`get_detail`, which already checked that the viewer may see it."""
    with read_connection() as conn:
        rows = conn.execute(ATTEMPTS_SQL, {"id": todo.id, "limit": limit}).fetchall()
    return with_newest_error_open([AttemptRow(**row) for row in rows])


def with_newest_error_open(rows: list[AttemptRow]) -> list[AttemptRow]:
    """Mark the newest attempt (rows come newest first) that reported an error: the drawer shows
    that error unfolded, the older ones folded."""
    for n, row in enumerate(rows):
        if row.error:
            return [*rows[:n], dataclasses.replace(row, error_open=True), *rows[n + 1 :]]
    return rows


AUDIT_SQL: LiteralString = f"""SELECT {AUDIT_COLUMNS}
FROM audit_log l
WHERE l.todo_id = %(id)s AND l.team_id = ANY(%(teams)s::uuid[])
ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s"""


def todo_audit(viewer: Viewer, todo: TodoRow, *, limit: int = AUDIT_SHOWN) -> list[AuditRow]:
    """Human actions on one todo (served by ``audit_log_todo``), scoped to the viewer's teams."""
    with read_connection() as conn:
        rows = conn.execute(AUDIT_SQL, {"id": todo.id, "teams": viewer.team_ids, "limit": limit}).fetchall()
    return [AuditRow(**row) for row in rows]


# A todo's parents and children (docs/lifecycle.md, "Dependencies"), the viewer's only, each with
# its Board state and whether it still counts (``settled``: done, or failed over by a ``run``
# child). At most 100 parents a todo; children are capped for the drawer.
RELATIVES_SHOWN = 100
RELATIVES_SQL: LiteralString = """
(SELECT 'parent' AS side, t.id, t.title, todo_board_state(t.state, t.next_retry_at) AS state, d.settled
 FROM todo_dependencies d JOIN todos t ON t.id = d.parent_id
 WHERE d.child_id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])
 ORDER BY t.created_at, t.id
 LIMIT %(limit)s)
UNION ALL
(SELECT 'child', t.id, t.title, todo_board_state(t.state, t.next_retry_at), d.settled
 FROM todo_dependencies d JOIN todos t ON t.id = d.child_id
 WHERE d.parent_id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])
 ORDER BY t.created_at, t.id
 LIMIT %(limit)s)"""


@dataclasses.dataclass(frozen=True)
class Relative:
    id: str
    title: str
    state: str
    settled: bool


def relatives(viewer: Viewer, todo: TodoRow, *, limit: int = RELATIVES_SHOWN) -> dict[str, list[Relative]]:
    """``{"parents": [...], "children": [...]}``: what the todo waits for, and what waits for it."""
    out: dict[str, list[Relative]] = {"parents": [], "children": []}
    with read_connection() as conn:
        rows = conn.execute(RELATIVES_SQL, {"id": todo.id, "eps": viewer.endpoint_ids, "limit": limit}).fetchall()
    for row in rows:
        side = "parents" if row["side"] == "parent" else "children"
        out[side].append(Relative(row["id"], row["title"], row["state"], row["settled"]))
    return out

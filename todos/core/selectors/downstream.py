"""What "cancel with everything downstream" would cancel: the preview the Board shows before it
asks (docs/board.md, "Dependencies"; the statement is ``store.human.cancel_downstream``).

The same walk as the statement (every child, their children, to any depth), and the same guard,
read as of now: the statement re-checks it row by row when it runs.
"""

from __future__ import annotations

import dataclasses
from typing import LiteralString

from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.store.human import CANCEL_GUARD

PREVIEW_SHOWN = 200

# Only the viewer's endpoints' todos are listed: a todo outside them (the dependencies never cross
# teams, so only a row written by hand) is not shown, and the statement leaves it alone.
PREVIEW_SQL: LiteralString = f"""
WITH RECURSIVE downstream(id, depth) AS (
    SELECT d.child_id, 1 FROM todo_dependencies d WHERE d.parent_id = %(id)s
    UNION
    SELECT d.child_id, w.depth + 1 FROM todo_dependencies d JOIN downstream w ON d.parent_id = w.id
    WHERE w.depth < 10000
),
nearest AS (SELECT id, min(depth) AS depth FROM downstream GROUP BY id)
SELECT t.id, t.title, todo_board_state(t.state, t.next_retry_at) AS state, n.depth,
       ({CANCEL_GUARD}) AS cancels,
       count(*) OVER () AS total,
       count(*) FILTER (WHERE {CANCEL_GUARD}) OVER () AS canceling
FROM nearest n JOIN todos t ON t.id = n.id
WHERE t.endpoint_id = ANY(%(eps)s::uuid[])
ORDER BY n.depth, t.created_at, t.id
LIMIT %(limit)s"""


@dataclasses.dataclass(frozen=True)
class Descendant:
    id: str
    title: str
    state: str  # its Board state
    depth: int  # 1: a child, 2: a grandchild…
    cancels: bool  # unfinished: the action cancels it


@dataclasses.dataclass(frozen=True)
class Preview:
    descendants: list[Descendant]  # the first PREVIEW_SHOWN, nearest first
    total: int  # every downstream todo the viewer sees
    canceling: int  # of them, those the action would cancel

    @property
    def more(self) -> int:
        return self.total - len(self.descendants)


def preview(viewer: Viewer, todo_id: str, *, limit: int = PREVIEW_SHOWN) -> Preview:
    """The todos downstream of ``todo_id`` the viewer sees, with what the action does to each."""
    with read_connection() as conn:
        rows = conn.execute(PREVIEW_SQL, {"id": todo_id, "eps": viewer.endpoint_ids, "limit": limit}).fetchall()
    items = [Descendant(r["id"], r["title"], r["state"], r["depth"], r["cancels"]) for r in rows]
    total = rows[0]["total"] if rows else 0
    canceling = rows[0]["canceling"] if rows else 0
    return Preview(items, total, canceling)

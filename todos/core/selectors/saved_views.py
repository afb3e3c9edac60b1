"""A person's saved views of the todo list, for the list's menu and the views page."""

from __future__ import annotations

from typing import LiteralString

from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.store.saved_views import SavedView

VIEWS_SQL: LiteralString = """
SELECT id, name, query, created_at FROM saved_views
WHERE user_id = %(user_id)s
ORDER BY lower(name), name"""


def views_of(viewer: Viewer) -> list[SavedView]:
    """The viewer's own views by name (at most ``MAX_VIEWS``: the store keeps it so)."""
    with read_connection() as conn:
        rows = conn.execute(VIEWS_SQL, {"user_id": viewer.user_id}).fetchall()
    return [SavedView(**row) for row in rows]

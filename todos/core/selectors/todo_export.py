"""Every todo of a list filter, for the CSV export: keyset pages of ``EXPORT_PAGE_ROWS``, read
on the event loop's own connections.

The export is the list without its page size: the same :func:`build_query` (so the same teams'
endpoints, filters and order), a search applied to every row rather than a window, and pages
continued by the order's keyset, never OFFSET. Each page takes a pooled connection and gives it
back (``aexecute``) before the caller writes the page out, so a slow download holds no connection and the
process holds one page at a time, whatever the size of the export.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import LiteralString

from todos.core.compose import Params
from todos.core.db import Statement, aexecute
from todos.core.filters import Cursor, TodoFilter
from todos.core.selectors.access import Viewer
from todos.core.selectors.failure_reason import ERROR_HEADLINE
from todos.core.selectors.scans import ORDERS, keyset, order_by, scan_sql
from todos.core.selectors.todo_query import build_query

EXPORT_PAGE_ROWS = 5_000

EXPORT_SELECT: LiteralString = """t.id, t.queue, t.kind, t.title, t.state, t.next_retry_at, t.priority,
           t.attempts_total, t.max_attempts, t.created_at, t.completed_at, t.result"""
# Why a todo last failed, as the Dead letters page words it: the last attempt's summary, else
# result.error; for a todo that did not fail, its last attempt's summary.
# The last attempt's error headline (``type: first line of message``, as the dead letters group),
# else its summary, else the todo's ``result.error``.
LAST_REASON: LiteralString = f"""coalesce((SELECT coalesce({ERROR_HEADLINE}, nullif(a.summary, ''))
                 FROM todo_attempts a WHERE a.todo_id = p.id ORDER BY a.seq DESC LIMIT 1),
                p.result->>'error')"""


def export_sql(keys: LiteralString, columns: tuple[LiteralString, ...], direction: LiteralString) -> LiteralString:
    return f"""
WITH page AS MATERIALIZED ({keys})
SELECT p.id, p.queue, p.kind, p.title, todo_board_state(p.state, p.next_retry_at) AS board_state,
       p.priority, p.attempts_total,
       p.max_attempts, p.created_at, p.completed_at,
       {LAST_REASON} AS last_reason
FROM page p
ORDER BY {order_by(columns, direction, "p")}"""


def problems(viewer: Viewer, f: TodoFilter) -> tuple[str, ...]:
    """What is wrong with the filter (a bad value, a team or endpoint the viewer has not): an
    export refuses it, where the list would show its message above a wider list."""
    return tuple(f.errors) + build_query(viewer, f.first_page()).errors


def export_page(viewer: Viewer, f: TodoFilter, cursor: Cursor | None = None) -> Statement[list[dict]] | None:
    """One page of the export after ``cursor`` (the first without one); None when the viewer
    can see no endpoint the filter names."""
    query = build_query(viewer, f.first_page()).searched_everywhere()
    if not query.endpoint_ids:
        return None
    columns, direction = ORDERS[f.sort]
    params = Params(query.params, limit=EXPORT_PAGE_ROWS)
    after = keyset(columns, "<" if direction == "DESC" else ">", cursor, params, "x") if cursor else None
    keys = scan_sql(query, columns=columns, direction=direction, keyset=after, limit="%(limit)s", select=EXPORT_SELECT)
    return Statement(export_sql(keys, columns, direction), params, list)


async def export_pages(viewer: Viewer, f: TodoFilter) -> AsyncIterator[list[dict]]:
    """The filter's todos in its order, a page of rows (dicts) at a time."""
    cursor: Cursor | None = None
    while True:
        page = export_page(viewer, f, cursor)
        if page is None:
            return
        rows = await aexecute(page)
        if not rows:
            return
        yield rows
        if len(rows) < EXPORT_PAGE_ROWS:
            return
        last = rows[-1]
        cursor = Cursor(last["created_at"], last["id"], last["priority"] if f.sort == "priority" else None)

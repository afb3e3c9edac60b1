"""The todo list: one keyset page of a filter, the rows newer than a page (live inserts), one row.

A text search is a bounded scan: each page looks at no more than ``SEARCH_SCAN_ROWS`` rows of the
otherwise-filtered list (newest first, or the chosen order), so a rare term costs a bounded
amount per page, and "next" continues the scan where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.compose import Params
from todos.core.filters import Cursor, TodoFilter
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.rows import LAPSED, ROW_SELECT, TodoRow
from todos.core.selectors.scans import ORDERS, by_queue, flip, keyset, order_by, scan_sql, window_sql
from todos.core.selectors.tab_counts import Count, per_tab_counts, window_counts
from todos.core.selectors.todo_query import build_query, search_predicate

PAGE_SIZE = 50
NEWER_LIMIT = 100
SEARCH_SCAN_ROWS = 1_000

SELECT_ROW: LiteralString = f"{ROW_SELECT},\n       {LAPSED}"
# The matches of a search's window per state tab, as columns ``tab_<state>`` beside the page's rows.
TAB_COUNT_COLUMNS: dict[str, LiteralString] = {
    "pending": "tab_pending",
    "blocked": "tab_blocked",
    "scheduled": "tab_scheduled",
    "claimed": "tab_claimed",
    "retry": "tab_retry",
    "dead": "tab_dead",
    "done": "tab_done",
    "canceled": "tab_canceled",
}
TAB_COUNTS: LiteralString = per_tab_counts(TAB_COUNT_COLUMNS, ",\n           ")


@dataclass(frozen=True)
class Page:
    rows: list[TodoRow]
    next_cursor: Cursor | None  # "older" in the current order
    prev_cursor: Cursor | None  # "newer" in the current order
    newest_cursor: Cursor | None  # the newest row (by created_at) of the page, for live inserts
    scanned_to_limit: bool = False  # a search stopped at SEARCH_SCAN_ROWS before filling the page
    errors: tuple[str, ...] = ()
    # A first page of a search of all states, newest first: its window is the tabs' window, so
    # the statement that chose the page also counted the tabs (the view reads no second window).
    tab_counts: dict[str, Count] | None = None


def list_page(viewer: Viewer, f: TodoFilter, *, page_size: int = PAGE_SIZE) -> Page:
    """One keyset page of the filtered list, plus the cursors around it."""
    query = build_query(viewer, f)
    errors = tuple(f.errors) + query.errors
    if not query.endpoint_ids:
        return Page([], None, None, None, errors=errors)
    columns, direction = ORDERS[f.sort]
    if f.sort == "priority" and f.state == "pending" and not f.queue and not f.mine:
        query = by_queue(query)
    backwards = f.before is not None
    scan_direction = flip(direction) if backwards else direction
    params = Params(query.params, limit=page_size + 1)
    after = None
    if f.after is not None:
        after = keyset(columns, "<" if direction == "DESC" else ">", f.after, params, "c")
    elif f.before is not None:
        after = keyset(columns, ">" if direction == "DESC" else "<", f.before, params, "c")
    scanned_to_limit = False
    tab_counts = None
    if query.search is None:
        # The page is chosen on index columns alone, then only its rows are read: each branch
        # (endpoint) offers its first page of keys, and a filter's covering index (a priority, a
        # reason group) answers that without the table; reading whole rows per branch read up to
        # a page per endpoint from the table (2,550 rows for 50 endpoints) to show 50.
        keys = scan_sql(
            query,
            columns=columns,
            direction=scan_direction,
            keyset=after,
            limit="%(limit)s",
            select=compose.columns(columns, "t"),
        )
        sql: LiteralString = f"""
WITH page_keys AS MATERIALIZED ({keys})
SELECT {SELECT_ROW}
FROM page_keys k JOIN todos t ON t.id = k.id
ORDER BY {order_by(columns, scan_direction)}"""
        with read_connection() as conn:
            rows = [TodoRow.from_row(r) for r in conn.execute(sql, params, prepare=query.prepare).fetchall()]
        more = len(rows) > page_size
        rows = rows[:page_size]
        edge = None
    else:
        # The window is chosen on index columns alone (an index-only scan per branch), and only
        # its SEARCH_SCAN_ROWS rows are read from the table to be searched: choosing it on whole
        # rows read that many rows per endpoint (50 endpoints: 100,000 rows, ~250 ms at 5M todos).
        scan = params.bind("scan", SEARCH_SCAN_ROWS)
        keys = window_sql(query, columns=columns, direction=scan_direction, keyset=after, limit=scan)
        matches, _ = search_predicate(f.q, viewer, params, "w")
        # Every row returned also carries the window's matches per state tab (``TAB_COUNTS``):
        # when the tabs' window is this one, they are the tabs' counts (``Page.tab_counts``).
        sql = f"""
WITH window_keys AS MATERIALIZED ({keys}),
window_rows AS MATERIALIZED (
    SELECT {SELECT_ROW}, t.source, t.idempotency_key, t.payload
    FROM window_keys k JOIN todos t ON t.id = k.id
),
hits AS MATERIALIZED (
    SELECT w.* FROM window_rows w
    WHERE {matches}
),
tabs AS (
    SELECT {TAB_COUNTS}
    FROM hits t
),
matched AS (
    SELECT w.*, false AS is_edge FROM hits w
    ORDER BY {order_by(columns, scan_direction, "w")} LIMIT %(limit)s
),
edge AS (
    SELECT w.*, true AS is_edge FROM window_rows w
    WHERE (SELECT count(*) FROM window_rows) >= {scan}
    ORDER BY {order_by(columns, flip(scan_direction), "w")} LIMIT 1
)
SELECT r.*, tabs.* FROM (SELECT * FROM matched UNION ALL SELECT * FROM edge) r CROSS JOIN tabs"""
        with read_connection() as conn:
            raw = conn.execute(sql, params, prepare=query.prepare).fetchall()
        edge_rows = [r for r in raw if r["is_edge"]]
        rows = sorted(
            (TodoRow.from_row(r) for r in raw if not r["is_edge"]),
            key=lambda r: tuple(getattr(r, c) for c in columns),
            reverse=scan_direction == "DESC",
        )
        more = len(rows) > page_size
        rows = rows[:page_size]
        edge = TodoRow.from_row(edge_rows[0]) if edge_rows else None
        if edge is not None and not more:
            scanned_to_limit = True  # the window ran out before the page filled: more may follow
        if f.state == "all" and f.sort == "newest" and f.after is None and f.before is None:
            # the tabs' window (todo_counts.search_counts): the newest rows of the filter, any state
            tab_counts = window_counts(raw[0] if raw else None, full=edge is not None, columns=TAB_COUNT_COLUMNS)
    if backwards:
        rows.reverse()
    next_cursor = prev_cursor = None
    if backwards:
        # we came from the page after: there is always a next page; a previous one if more rows
        next_cursor = Cursor.of(rows[-1], sort=f.sort) if rows else f.before
        if more or scanned_to_limit:
            prev_cursor = Cursor.of(rows[0], sort=f.sort) if rows else None
    else:
        if more:
            next_cursor = Cursor.of(rows[-1], sort=f.sort)
        elif scanned_to_limit:
            next_cursor = Cursor.of(edge, sort=f.sort)
        if f.after is not None and rows:
            prev_cursor = Cursor.of(rows[0], sort=f.sort)
    newest = max(rows, key=lambda r: (r.created_at, r.id), default=None)
    return Page(
        rows,
        next_cursor,
        prev_cursor,
        Cursor(newest.created_at, newest.id) if newest else None,
        scanned_to_limit=scanned_to_limit,
        errors=errors,
        tab_counts=tab_counts,
    )


def rows_newer_than(viewer: Viewer, f: TodoFilter, cursor: Cursor, *, limit: int = NEWER_LIMIT) -> list[TodoRow]:
    """Rows created after ``cursor`` that match the filter, newest first (for live inserts)."""
    query = build_query(viewer, f)
    if not query.endpoint_ids:
        return []
    query = query.searched_everywhere()  # the set newer than a page is small: no window
    params = Params(query.params, limit=limit)
    columns: tuple[LiteralString, ...] = ("created_at", "id")
    newer = keyset(columns, ">", Cursor(cursor.created_at, cursor.id), params, "n")
    sql = scan_sql(query, columns=columns, direction="DESC", keyset=newer, limit="%(limit)s", select=SELECT_ROW)
    with read_connection() as conn:
        return [TodoRow.from_row(r) for r in conn.execute(sql, params, prepare=query.prepare).fetchall()]


GET_ROW_SQL: LiteralString = f"""
SELECT {SELECT_ROW}
FROM todos t WHERE t.id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])"""


def get_row(viewer: Viewer, todo_id: str) -> TodoRow | None:
    """One row of the list, or None when it does not exist or belongs to another team."""
    if not viewer.endpoint_ids or not isinstance(todo_id, str) or len(todo_id) > 64:
        return None
    with read_connection() as conn:
        row = conn.execute(GET_ROW_SQL, {"id": todo_id, "eps": viewer.endpoint_ids}).fetchone()
    return TodoRow.from_row(row) if row else None


def paused_queues(viewer: Viewer) -> set[tuple[UUID, str]]:
    """(team id, queue) pairs paused for the viewer's teams: the list marks their rows."""
    if not viewer.team_ids:
        return set()
    with read_connection() as conn:
        rows = conn.execute(
            "SELECT team_id, queue FROM queue_pauses WHERE team_id = ANY(%s::uuid[])", (viewer.team_ids,)
        ).fetchall()
    return {(row["team_id"], row["queue"]) for row in rows}

"""What a bulk action would touch: the selected ids the viewer can see, how many an action would
change, and the ids of "everything matching" a filter, in keyset chunks.

Eligibility is the store's own guard for the action (``store.operator.BULK_GUARDS``), so a
preview never counts a row the action itself would skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import LiteralString

from todos.core import compose
from todos.core.compose import Params
from todos.core.db import single_row
from todos.core.filters import Cursor, TodoFilter
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.scans import branches, keyset, scan_sql
from todos.core.selectors.todo_counts import Count, capped_count_sql
from todos.core.selectors.todo_query import TodoQuery, build_query
from todos.core.store.human import BULK_GUARDS


def _bulk_query(viewer: Viewer, f: TodoFilter, action: str) -> TodoQuery:
    acting = [e.id for e in viewer.acting_endpoints()]
    query = build_query(viewer, f.first_page(), endpoints=acting)
    # a background job may scan further than a page: the search applies to every row
    return query.where(BULK_GUARDS[action]).searched_everywhere()


VISIBLE_IDS_SQL: LiteralString = "SELECT id FROM todos WHERE id = ANY(%s::text[]) AND endpoint_id = ANY(%s::uuid[])"


def visible_ids(viewer: Viewer, ids: list) -> list[str]:
    """The selected ids the viewer can see, in their order (foreign and unknown ids drop out alike)."""
    ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and 0 < len(i) <= 64]
    if not ids or not viewer.endpoint_ids:
        return []
    with read_connection() as conn:
        rows = conn.execute(VISIBLE_IDS_SQL, (ids, viewer.endpoint_ids)).fetchall()
    found = {r["id"] for r in rows}
    return [i for i in ids if i in found]


def count_eligible(viewer: Viewer, ids: list[str], action: str) -> int:
    """How many of ``ids`` a bulk ``action`` would change now: on endpoints the viewer may act on."""
    acting = [e.id for e in viewer.acting_endpoints()]
    if not ids or not acting:
        return 0
    sql: LiteralString = f"""SELECT count(*) AS n FROM todos t
WHERE t.id = ANY(%s::text[]) AND t.endpoint_id = ANY(%s::uuid[])
  AND {BULK_GUARDS[action]}"""
    with read_connection() as conn:
        return single_row(conn.execute(sql, (ids, acting)))["n"]


def count_matching(viewer: Viewer, f: TodoFilter, action: str, *, cap: int) -> Count:
    """How many rows a bulk action on "everything matching" would touch (capped)."""
    query = _bulk_query(viewer, f, action)
    if not query.endpoint_ids:
        return Count(0, False)
    if query.mine:
        sql = capped_count_sql(query)
    else:
        source, state_pred = branches(query)
        where = compose.conjunction((f"t.endpoint_id = e.id{state_pred}", *query.predicates), indent="        ")
        sql: LiteralString = f"""SELECT count(*) AS n FROM (
    SELECT 1 FROM {source}
    CROSS JOIN LATERAL (
        SELECT 1 FROM todos t
        WHERE {where}) x
    LIMIT %(cap)s) c"""
    with read_connection() as conn:
        n = single_row(conn.execute(sql, Params(query.params, cap=cap + 1)))["n"]
    return Count(min(n, cap), n > cap, cap)


def iter_matching_ids(
    viewer: Viewer, f: TodoFilter, action: str, *, limit: int, chunk: int = 5000
) -> Iterator[list[str]]:
    """The ids a bulk action on "everything matching" covers, newest first, in keyset chunks."""
    query = _bulk_query(viewer, f, action)
    if not query.endpoint_ids:
        return
    columns: tuple[LiteralString, ...] = ("created_at", "id")
    cursor: Cursor | None = None
    seen = 0
    while seen < limit:
        params = Params(query.params, limit=min(chunk, limit - seen))
        after = keyset(columns, "<", cursor, params, "b") if cursor else None
        sql = scan_sql(
            query, columns=columns, direction="DESC", keyset=after, limit="%(limit)s", select="t.id, t.created_at"
        )
        with read_connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        if not rows:
            return
        seen += len(rows)
        yield [r["id"] for r in rows]
        if len(rows) < params["limit"]:
            return
        cursor = Cursor(rows[-1]["created_at"], rows[-1]["id"])

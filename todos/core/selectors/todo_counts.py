"""The state tabs' counts.

The tabs' counts are the relay's exact counts (``todo_counts``); "assigned to me" and the filters
on a todo's own columns, which they cannot answer, count rows: exact up to ``COUNT_CAP`` (over
``LIMIT cap + 1``), shown as "1,000+" beyond it. A render never walks more than ``cap`` matches
per state, and under a row filter no more than ``cap`` matches for all the tabs together.
"""

from __future__ import annotations

import dataclasses
from typing import LiteralString

from todos.core import compose
from todos.core.compose import Params
from todos.core.db import single_row
from todos.core.filters import TodoFilter
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.scans import ORDERS, scan_sql, window_sql
from todos.core.selectors.tab_counts import COUNT_CAP, TAB_COLUMNS, Count, per_tab_counts, window_counts
from todos.core.selectors.todo_query import STATE_PREDICATES, TodoQuery, build_query, search_predicate

# Counted exactly: leases in flight, bounded by the number of workers (``todos_claimed``).
EXACT_COUNTS = ("claimed",)
COLUMN_SEPARATOR: LiteralString = ",\n       "


def capped_count_sql(query: TodoQuery, cap: LiteralString = "%(cap)s") -> LiteralString:
    """Count the rows of ``query`` up to a cap, walking an index in order per branch.

    Each branch is ``ORDER BY created_at LIMIT cap`` on one endpoint (and state, or queue): an
    ordered index scan that stops after ``cap`` entries. A bare ``count(*) … LIMIT`` lets the
    planner pick a sequential scan that, for a rare state, reads the whole table before it can
    say "0"; the ordered branch cannot.
    """
    counted = scan_sql(
        query,
        columns=("created_at", "id"),
        direction="ASC",
        keyset=None,
        limit=cap,
        select="t.created_at, t.id",
        ordered=False,
    )
    return f"SELECT count(*) AS n FROM ({counted}) counted"


# The relay's counts (todo_counts) under the list's filters that they can answer: team and
# endpoint (the endpoint set), queue, state. One statement, O(endpoints × queues × states).
COUNTS_SQL: LiteralString = """
SELECT state, sum(n)::bigint AS n FROM todo_counts
WHERE endpoint_id = ANY(%(eps)s::uuid[]) AND (%(queue)s::text IS NULL OR queue = %(queue)s)
GROUP BY state"""


def state_counts(viewer: Viewer, f: TodoFilter) -> dict[str, Count]:
    """Per state tab: the count under the current filter. With a search, the search's matches
    (:func:`search_counts`).

    Exact, from the relay's counts, unless "assigned to me" or a filter on the todos' own columns
    (kind, priority, days, failure reason) is on: counts cannot answer those. Under such a filter
    the tabs count one bounded walk of it (:func:`filtered_counts`); "assigned to me" alone counts
    each tab's rows, exact up to COUNT_CAP (claimed: always exact) and "1,000+" beyond. Either way
    one statement: one round trip and one snapshot for the seven numbers.
    """
    keys = ("all", *STATE_PREDICATES)  # "all" first, as the tabs show them
    if f.q:
        return search_counts(viewer, f, keys)
    unsearched = dataclasses.replace(f, q="")
    if not f.mine and not f.row_filtered:
        query = build_query(viewer, dataclasses.replace(unsearched, state="all"))
        if not query.endpoint_ids:
            return {key: Count(0, False) for key in keys}
        with read_connection() as conn:
            rows = conn.execute(COUNTS_SQL, {"eps": list(query.endpoint_ids), "queue": f.queue or None}).fetchall()
        by_state = {row["state"]: row["n"] for row in rows}
        exact = {key: Count(by_state.get(key, 0), False) for key in STATE_PREDICATES}
        return {"all": Count(sum(c.value for c in exact.values()), False), **exact}
    if f.row_filtered:
        return filtered_counts(viewer, unsearched, keys)
    return _scanned_counts(viewer, unsearched, keys)


def filtered_counts(viewer: Viewer, f: TodoFilter, keys: tuple[str, ...]) -> dict[str, Count]:
    """The tabs' counts under a filter on the todos' own columns: the first ``COUNT_CAP + 1``
    matches of the filter (every state), in whatever order the indexes give them, counted per tab.

    One walk that stops at the cap for all the tabs, instead of one per tab: a tab whose state is
    rare under the filter (a priority among the canceled) walked whole histories to learn it had
    fewer than the cap. Under the cap every count is exact; past it "All" reads "1,000+" and each
    state "n+" (at least that many: more may lie past the walk).
    """
    query = build_query(viewer, dataclasses.replace(f, state="all", after=None, before=None))
    if not query.endpoint_ids:
        return {key: Count(0, False) for key in keys}
    params = Params(query.params)
    cap = params.bind("cap", COUNT_CAP + 1)
    # Under a finished range each endpoint is walked by finished time (todos_endpoint_finished): by
    # created time the planner, blind to the two times' correlation, chose to read the whole day.
    finished = any(bound is not None for bound in f.day_bounds("finished"))
    walked = scan_sql(
        query,
        columns=("completed_at", "id") if finished else ("created_at", "id"),
        direction="DESC",
        keyset=None,
        limit=cap,
        select="t.created_at, t.id, t.state, t.next_retry_at",
        ordered=False,
    )
    per_state = per_tab_counts()
    sql: LiteralString = f"""
SELECT count(*) AS walked,
       {per_state}
FROM ({walked}) t"""
    with read_connection() as conn:
        row = single_row(conn.execute(sql, params, prepare=query.prepare))
    full = row["walked"] > COUNT_CAP
    counts = {key: Count(row[key], False, at_least=full) for key in STATE_PREDICATES}
    return {"all": Count(min(row["walked"], COUNT_CAP), full, COUNT_CAP), **counts}


def _scanned_counts(viewer: Viewer, f: TodoFilter, keys: tuple[str, ...]) -> dict[str, Count]:
    """The tabs' counts by scanning the rows, each capped at COUNT_CAP (for "assigned to me").

    Every tab's query binds the same parameters (the viewer's endpoints, the human, the queue):
    states and the retry/dead split are literals, so the tabs' counts run side by side in one
    statement on one set of parameters (``Params`` refuses a name bound to two values).
    """
    counts: dict[str, Count] = {}
    parts: list[LiteralString] = []
    params = Params(cap=COUNT_CAP + 1)
    for key in keys:
        query = build_query(viewer, dataclasses.replace(f, state=key))
        if not query.endpoint_ids:
            counts[key] = Count(0, False)
            continue
        params.merge(query.params)
        if key in EXACT_COUNTS:
            store_state, _ = STATE_PREDICATES[key]
            where = compose.conjunction(
                (
                    f"t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = {compose.state(store_state)}",
                    *query.predicates,
                    *((query.mine_predicate,) if query.mine_predicate else ()),
                ),
                indent="          ",
            )
            sql: LiteralString = f"SELECT count(*) FROM todos t WHERE {where}"
        else:
            sql = capped_count_sql(query)  # the retry tab: a flat scan of todos_retry_due (build_query)
        parts.append(f"({sql}) AS {TAB_COLUMNS[key]}")
    if parts:
        with read_connection() as conn:
            row = single_row(conn.execute(f"SELECT {compose.join(COLUMN_SEPARATOR, parts)}", params))
        for key in keys:
            if key in counts:
                continue
            n = row[key]
            counts[key] = Count(n, False) if key in EXACT_COUNTS else Count(min(n, COUNT_CAP), n > COUNT_CAP, COUNT_CAP)
    return {key: counts[key] for key in keys}


def search_counts(viewer: Viewer, f: TodoFilter, keys: tuple[str, ...]) -> dict[str, Count]:
    """The tabs' counts of a search: its matches per state among the newest ``SEARCH_SCAN_ROWS``
    todos of the filter (its state aside), the window a search's first page looks at.

    One bounded window for all seven tabs (an index-only scan, then that many rows read), so the
    tabs agree with the list and cost what a search page costs. When the window was full, more may
    match further back: the counts read "12+" (``at_least``). A whole todo id is a probe, no window.
    """
    from todos.core.selectors.todo_list import SEARCH_SCAN_ROWS  # the list's window (it imports this module)

    query = build_query(viewer, dataclasses.replace(f, state="all", after=None, before=None))
    if not query.endpoint_ids:
        return {key: Count(0, False) for key in keys}
    columns, direction = ORDERS["newest"]
    params = Params(query.params)
    scan = params.bind("scan", SEARCH_SCAN_ROWS)
    window = window_sql(query, columns=columns, direction=direction, keyset=None, limit=scan)
    if query.search is None:
        matches: LiteralString = "true"  # a whole id: build_query made it a predicate of the window
    else:
        matches, _ = search_predicate(f.q, viewer, params, "t")
    per_state = per_tab_counts()
    sql: LiteralString = f"""
WITH window_keys AS MATERIALIZED ({window})
SELECT (SELECT count(*) FROM window_keys) AS scanned,
       {per_state}
FROM window_keys k JOIN todos t ON t.id = k.id
WHERE {matches}"""
    with read_connection() as conn:
        row = single_row(conn.execute(sql, params, prepare=query.prepare))
    full = query.search is not None and row["scanned"] >= SEARCH_SCAN_ROWS
    return window_counts(row, full=full)

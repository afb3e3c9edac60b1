"""Scans: the SQL that walks an index in order and stops after a page.

Scale is the constraint (millions of todos), so no list reads an unbounded set. A scan runs one
``LATERAL`` branch per visible endpoint (and per state when a queue is chosen without a state),
each an ordered index scan that stops after ``limit`` rows, then merges the branches;
``todos_endpoint_created``, ``todos_endpoint_state_created`` and
``todos_endpoint_queue_state_created`` serve them, and ``(created_at, id) < (…)`` row comparisons
continue a page without OFFSET. A search's window writes the branches out instead, one merge
that reads each walk only as far as it needs (``merged``). Two other shapes serve what those
indexes cannot: "assigned to me" starts from the human's own rows, and retry windows from their
small partial index.
"""

from __future__ import annotations

import dataclasses
from typing import LiteralString

from todos.core import compose
from todos.core.compose import TODO_STATES, Params
from todos.core.filters import Cursor
from todos.core.replica import read_connection
from todos.core.selectors.todo_query import TodoQuery

Columns = tuple[LiteralString, ...]

ORDERS: dict[str, tuple[Columns, LiteralString]] = {
    # sort → (key columns, direction)
    "newest": (("created_at", "id"), "DESC"),
    "oldest": (("created_at", "id"), "ASC"),
    "priority": (("priority", "created_at", "id"), "ASC"),
}


def flip(direction: LiteralString) -> LiteralString:
    return "ASC" if direction == "DESC" else "DESC"


def order_by(columns: Columns, direction: LiteralString, alias: LiteralString = "t") -> LiteralString:
    return compose.join(", ", (f"{alias}.{c} {direction}" for c in columns))


def keyset(columns: Columns, op: LiteralString, cursor: Cursor, params: Params, name: LiteralString) -> LiteralString:
    """Rows past ``cursor`` in ``columns`` order (``op`` is ``<`` or ``>``), binding the cursor's
    values as ``<name>_<column>``."""
    values = {"priority": cursor.priority, "created_at": cursor.created_at, "id": cursor.id}
    holders: list[LiteralString] = [params.bind(f"{name}_{col}", values[col]) for col in columns]
    condition: LiteralString = f"({compose.columns(columns, 't')}) {op} ({compose.join(', ', holders)})"
    if columns[0] == "priority":
        # todos_pending ends in (priority, created_at) without id: this looser prefix is what its
        # index scan can start from; the exact comparison above then drops the ties already shown.
        condition += f"\n      AND (t.priority, t.created_at) {op}= ({holders[0]}, {holders[1]})"
    return condition


def branches(query: TodoQuery) -> tuple[LiteralString, LiteralString]:
    """The FROM clause of the per-endpoint (and per-state) lateral scan, and its branch predicate.

    States are literals (``t.state = 'pending'``), so the planner can use the partial indexes
    (``todos_pending``, ``todos_claimed``); several states are a second ``unnest``.
    """
    source: LiteralString = "unnest(%(eps)s::uuid[]) AS e(id)"
    pred: LiteralString = ""
    if query.by_queue:
        source = "unnest(%(eps)s::uuid[], %(queues)s::text[]) AS e(id, queue)"
        pred = " AND t.queue = e.queue"
    if query.states is None:
        return source, pred
    if len(query.states) == 1:
        return source, pred + f" AND t.state = {compose.state(query.states[0])}"
    return f"{source}\nCROSS JOIN unnest({compose.states(query.states)}) AS s(state)", pred + " AND t.state = s.state"


def scan_sql(
    query: TodoQuery,
    *,
    columns: Columns,
    direction: LiteralString,
    keyset: LiteralString | None,
    limit: LiteralString,
    select: LiteralString,
    ordered: bool = True,
    merged: bool = False,
) -> LiteralString:
    """The first ``limit`` rows of the query in ``columns`` order (``limit`` a placeholder): one
    ordered, limited index scan per branch (endpoint, and state or queue), merged.
    ``ordered=False`` leaves the merged rows unordered, so a count stops as soon as it has
    ``limit`` of them. ``merged=True`` (a search's window) writes the branches out as one
    ``UNION ALL`` where :func:`mergeable` allows, so each walk is read only as far as the merge
    needs (:func:`_merged_scan_sql`)."""
    extra = query.predicates + ((keyset,) if keyset else ())
    if query.mine:
        return _mine_scan_sql(
            query, extra, columns=columns, direction=direction, limit=limit, select=select, ordered=ordered
        )
    if query.flat:
        states: tuple[LiteralString, ...] = tuple(f"t.state = {compose.state(s)}" for s in query.states or ())
        order: LiteralString = f"ORDER BY {order_by(columns, direction)}\n" if ordered else ""
        return f"""
SELECT {select}
FROM todos t
WHERE {compose.conjunction(("t.endpoint_id = ANY(%(eps)s::uuid[])", *states, *extra), indent="  ")}
{order}LIMIT {limit}"""
    if merged and ordered and mergeable(query):
        return _merged_scan_sql(query, extra, columns=columns, direction=direction, limit=limit, select=select)
    source, state_pred = branches(query)
    where = compose.conjunction((f"t.endpoint_id = e.id{state_pred}", *extra), indent="      ")
    outer: LiteralString = f"ORDER BY {order_by(columns, direction, 'x')}\n" if ordered else ""
    return f"""
SELECT x.* FROM {source}
CROSS JOIN LATERAL (
    SELECT {select}
    FROM todos t
    WHERE {where}
    ORDER BY {order_by(columns, direction)}
    LIMIT {limit}
) x
{outer}LIMIT {limit}"""


def window_sql(
    query: TodoQuery, *, columns: Columns, direction: LiteralString, keyset: LiteralString | None, limit: LiteralString
) -> LiteralString:
    """A search's window: the query's first ``limit`` keys (``columns`` only, read from the
    indexes without their rows), chosen by one merge of the endpoints' walks where
    :func:`mergeable` allows. The list's window and the tabs' are both this."""
    select = compose.columns(columns, "t")
    return scan_sql(query, columns=columns, direction=direction, keyset=keyset, limit=limit, select=select, merged=True)


# The most endpoints a merged scan writes out as branches: past it, the statement's text and its
# planning grow with every branch, and the LATERAL form serves.
MERGED_MAX_BRANCHES = 64


def mergeable(query: TodoQuery) -> bool:
    """Whether the query's branches are its endpoints alone (no queue pairs, at most one state),
    few enough to write out one by one."""
    return (
        not query.by_queue
        and (query.states is None or len(query.states) == 1)
        and 0 < len(query.endpoint_ids) <= MERGED_MAX_BRANCHES
    )


def _merged_scan_sql(
    query: TodoQuery,
    extra: tuple[LiteralString, ...],
    *,
    columns: Columns,
    direction: LiteralString,
    limit: LiteralString,
    select: LiteralString,
) -> LiteralString:
    """The LATERAL scan's branches written out, one ordered and limited walk per endpoint (the
    ``eps`` array's element ``i``: a value at execution, so the plan serves any endpoints of that
    count) under one ``ORDER BY … LIMIT``. PostgreSQL merges them (Merge Append) and reads each
    walk only as far as the merge takes from it: for 50 endpoints, about ``limit`` keys in all
    instead of ``limit`` per endpoint and a sort of them all (20.3 against 1.8 ms for five teams'
    newest 1,000 dead letters at 5M todos: bench/README.md)."""
    _, state_pred = branches(query)
    parts: list[LiteralString] = []
    for n in range(1, len(query.endpoint_ids) + 1):
        endpoint: LiteralString = f"t.endpoint_id = (%(eps)s::uuid[])[{compose.integer(n)}]{state_pred}"
        where = compose.conjunction((endpoint, *extra), indent="      ")
        parts.append(f"""  (SELECT {select}
    FROM todos t
    WHERE {where}
    ORDER BY {order_by(columns, direction)}
    LIMIT {limit})""")
    branches_sql = compose.join(" UNION ALL\n", parts)
    return f"""
SELECT x.* FROM (
{branches_sql}
) x
ORDER BY {order_by(columns, direction, "x")}
LIMIT {limit}"""


def _mine_scan_sql(
    query: TodoQuery,
    extra: tuple[LiteralString, ...],
    *,
    columns: Columns,
    direction: LiteralString,
    limit: LiteralString,
    select: LiteralString,
    ordered: bool,
) -> LiteralString:
    """``mine`` driven by the human's own rows instead of the endpoints' histories.

    Assigned to the human: one ordered scan per state of ``todos_assignee_state_created``, kept to
    the viewer's endpoints. Leased by the human and assigned to someone else (or no one): the
    claimed rows, bounded by the leases in flight (``todos_claimed``). Filtering the endpoints'
    scans by the human instead read each endpoint's whole history when the human had fewer than a
    page of rows there (11 s for one team at 5M todos).
    """
    states = query.states if query.states is not None else TODO_STATES
    assigned = compose.conjunction(
        ("t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])", *extra),
        indent="          ",
    )
    parts: list[LiteralString] = [
        f"""
    SELECT y.* FROM unnest({compose.states(states)}) AS s(state)
    CROSS JOIN LATERAL (
        SELECT {select}
        FROM todos t
        WHERE {assigned}
        ORDER BY {order_by(columns, direction)} LIMIT {limit}
    ) y"""
    ]
    if "claimed" in states:
        leased = compose.conjunction(
            (
                "t.state = 'claimed' AND t.owner = %(me)s AND t.assignee IS DISTINCT FROM %(me)s",
                "t.endpoint_id = ANY(%(eps)s::uuid[])",
                *extra,
            ),
            indent="       ",
        )
        parts.append(f"""
    (SELECT {select}
     FROM todos t
     WHERE {leased}
     ORDER BY {order_by(columns, direction)} LIMIT {limit})""")
    outer: LiteralString = f"ORDER BY {order_by(columns, direction, 'x')}\n" if ordered else ""
    return f"""
SELECT x.* FROM ({compose.join(" UNION ALL ", parts)}
) x
{outer}LIMIT {limit}"""


QUEUE_PAIRS_SQL: LiteralString = """
WITH RECURSIVE qs AS (
    SELECT e.id AS endpoint_id,
           (SELECT t.queue FROM todos t WHERE t.endpoint_id = e.id AND t.state = 'pending'
            ORDER BY t.queue LIMIT 1) AS queue
    FROM unnest(%(eps)s::uuid[]) AS e(id)
    UNION ALL
    SELECT qs.endpoint_id,
           (SELECT t.queue FROM todos t WHERE t.endpoint_id = qs.endpoint_id AND t.state = 'pending'
              AND t.queue > qs.queue ORDER BY t.queue LIMIT 1)
    FROM qs WHERE qs.queue IS NOT NULL
)
SELECT endpoint_id, queue FROM qs WHERE queue IS NOT NULL"""


def by_queue(query: TodoQuery) -> TodoQuery:
    """The query branched per (endpoint, queue), so priority order comes straight from
    ``todos_pending (endpoint_id, queue, priority, created_at)``. The queues holding pending work
    are found with a loose index scan: one index probe per distinct queue, not per row."""
    with read_connection() as conn:
        rows = conn.execute(QUEUE_PAIRS_SQL, {"eps": list(query.endpoint_ids)}).fetchall()
    query = query.bind(eps=[r["endpoint_id"] for r in rows], queues=[r["queue"] for r in rows])
    return dataclasses.replace(query, by_queue=True)

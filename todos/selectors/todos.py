"""The todo list, its counts, and the drawer's reads.

Scale is the constraint (millions of todos): every list is a keyset page served by an index, and
no count walks an unbounded set.

* Lists run one ``LATERAL`` branch per visible endpoint (and per state when a queue is chosen
  without a state), each an ordered index scan that stops after a page, then merge the branches.
  ``todos_endpoint_created``, ``todos_endpoint_state_created`` and
  ``todos_endpoint_queue_state_created`` serve them; ``(created_at, id) < (%s, %s)`` row
  comparisons continue a page without OFFSET.
* The state tabs' counts are the relay's exact counts (``todo_counts``); only "assigned to me",
  which they cannot answer, counts rows: exact up to ``COUNT_CAP`` (over ``LIMIT cap + 1``), shown
  as "1,000+" beyond it (leases in flight, bounded by the workers, always exact).
* A text search is a bounded scan: each page looks at no more than ``SEARCH_SCAN_ROWS`` rows of
  the otherwise-filtered list (newest first, or the chosen order), so a rare term costs a bounded
  amount per page, and "next" continues the scan where it stopped.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings

from todos.db import pool
from todos.filters import Cursor, TodoFilter, parse_payload_match
from todos.selectors.access import Viewer
from todos.store.records import Attempt

PAGE_SIZE = 50
NEWER_LIMIT = 100
COUNT_CAP = 1_000  # a tab reads "1,000+" past it; ~1 ms of index per state at most
SEARCH_SCAN_ROWS = 1_000
ATTEMPTS_SHOWN = 50
AUDIT_SHOWN = 100

STATE_PREDICATES = {
    "pending": ("pending", None),
    "claimed": ("claimed", None),
    "retry": ("failed", "t.next_retry_at IS NOT NULL"),
    "dead": ("failed", "t.next_retry_at IS NULL"),
    "done": ("done", None),
    "canceled": ("canceled", None),
}
STORE_STATES = ("pending", "claimed", "failed", "done", "canceled")
# Counted exactly: leases in flight, bounded by the number of workers (``todos_claimed``). Every
# other set can grow without bound (a backlog, an outage's dead letters, history), so it is counted
# over ``LIMIT cap + 1``: exact up to the cap, "1,000+" beyond it. A render never walks more than
# ``cap`` index entries per state.
EXACT_COUNTS = ("claimed",)

ROW_COLUMNS = (
    "id",
    "endpoint_id",
    "queue",
    "kind",
    "title",
    "state",
    "owner",
    "assignee",
    "priority",
    "attempt",
    "max_attempts",
    "attempts_total",
    "lease_expires_at",
    "next_retry_at",
    "created_at",
    "updated_at",
    "claimed_at",
    "completed_at",
)
ROW_SELECT = ", ".join(f"t.{c}" for c in ROW_COLUMNS)
LAPSED = "(t.state = 'claimed' AND t.lease_expires_at < now()) AS lease_lapsed"

ORDERS = {
    # sort → (key columns, direction)
    "newest": (("created_at", "id"), "DESC"),
    "oldest": (("created_at", "id"), "ASC"),
    "priority": (("priority", "created_at", "id"), "ASC"),
}


@dataclass(frozen=True)
class TodoRow:
    id: str
    endpoint_id: UUID
    queue: str
    kind: str | None
    title: str
    state: str
    owner: str | None
    assignee: str | None
    priority: int
    attempt: int
    max_attempts: int
    attempts_total: int
    lease_expires_at: datetime | None
    next_retry_at: datetime | None
    created_at: datetime
    updated_at: datetime
    claimed_at: datetime | None
    completed_at: datetime | None
    lease_lapsed: bool

    @property
    def display_state(self) -> str:
        """The Board's state key: the store's ``failed`` splits into retry scheduled and dead letter."""
        if self.state == "failed":
            return "retry" if self.next_retry_at is not None else "dead"
        return self.state

    @property
    def dead_letter(self) -> bool:
        return self.display_state == "dead"

    @property
    def short_id(self) -> str:
        return short_id(self.id)

    @classmethod
    def from_row(cls, row: dict) -> TodoRow:
        return cls(**{f.name: row[f.name] for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class TodoDetail(TodoRow):
    source: str | None
    payload: Any
    idempotency_key: str | None
    attempts_pruned: int
    result: Any
    team_id: UUID
    paused: bool


def short_id(todo_id: str) -> str:
    """``td_`` plus the first 8 hex digits: enough to tell rows apart on one screen."""
    return todo_id[:11] if todo_id.startswith("td_") else todo_id[:12]


@dataclass(frozen=True)
class Page:
    rows: list[TodoRow]
    next_cursor: Cursor | None  # "older" in the current order
    prev_cursor: Cursor | None  # "newer" in the current order
    newest_cursor: Cursor | None  # the newest row (by created_at) of the page, for live inserts
    scanned_to_limit: bool = False  # a search stopped at SEARCH_SCAN_ROWS before filling the page
    errors: tuple[str, ...] = ()


# --- the shared WHERE clause -------------------------------------------------------------------


@dataclass
class Query:
    """The filter as SQL: the endpoints to scan, per-row predicates, their parameters."""

    endpoint_ids: list[UUID]
    states: list[str] | None  # one branch per state (None: a branch per endpoint only)
    predicates: list[str]
    params: dict
    search: str | None = None  # predicate on alias ``t``, applied to the bounded scan window
    errors: list[str] = dataclasses.field(default_factory=list)
    by_queue: bool = False  # branches per (endpoint, queue) in params "eps"/"queues" (see queue_pairs)
    mine: bool = False  # assigned to the viewer or leased by them (params "me"): see _scan_sql
    flat: bool = False  # one scan over all the endpoints (a small partial index): see _scan_sql

    @property
    def mine_predicate(self) -> str | None:
        """``mine`` as a plain predicate, for statements over small sets (leases in flight)."""
        return "(t.assignee = %(me)s OR t.owner = %(me)s)" if self.mine else None


def build_query(viewer: Viewer, f: TodoFilter, *, endpoints: list[UUID] | None = None) -> Query:
    errors: list[str] = []
    eps = endpoints if endpoints is not None else viewer.endpoint_ids
    if f.team:
        team = viewer.team_by_slug(f.team)
        if team is None:
            errors.append(f"team: you are not a member of a team {f.team!r}")
            eps = []
        else:
            eps = [e for e in eps if viewer.endpoint(e).team_id == team.id]
    if f.endpoint:
        ep = viewer.endpoint_by_slug(f.endpoint)
        if ep is None:
            errors.append(f"endpoint: none of your teams has an endpoint {f.endpoint!r}")
            eps = []
        else:
            eps = [e for e in eps if e == ep.id]
    predicates: list[str] = []
    params: dict[str, Any] = {"eps": list(eps)}
    states: list[str] | None = None
    if f.state != "all":
        store_state, extra = STATE_PREDICATES[f.state]
        states = [store_state]
        if extra:
            predicates.append(extra)
    if f.queue:
        predicates.append("t.queue = %(queue)s")
        params["queue"] = f.queue
        if states is None:
            states = list(STORE_STATES)  # the (endpoint, queue, state, created_at) index needs a state
    mine = f.mine
    if mine:
        params["me"] = viewer.owner
    search = None
    if f.q:
        search, search_params = search_predicate(f.q, viewer)
        params.update(search_params)
        if "exact_id" in search_params:
            predicates.append(search)  # a whole id: a primary-key probe, no scan window needed
            search = None
    if states is not None:
        params["states"] = states
    # Retry windows are a small partial index (todos_retry_due); walking each endpoint's failed rows
    # newest first to find them read its dead letters too (10 ms with 100,000 of them).
    flat = f.state == "retry"
    return Query(list(eps), states, predicates, params, search, errors, mine=mine, flat=flat)


FULL_ID_RE = re.compile(r"^td_[0-9a-f]{32}$")


def search_predicate(q: str, viewer: Viewer, alias: str = "t") -> tuple[str, dict]:
    """The search box as SQL over table alias ``alias``: a whole todo id, a ``key=value`` payload
    containment, or text (ILIKE) over id, title, kind, source, idempotency key and payload."""
    if FULL_ID_RE.match(q):
        return f"{alias}.id = %(exact_id)s", {"exact_id": q}
    match = parse_payload_match(q)
    if match is not None:
        names = match.key.lower().split(".")
        masked = [m.lower() for m in settings.BOARD_MASKED_PAYLOAD_KEYS]
        if not any(m in part for part in names for m in masked):
            params = {f"pm{i}": doc for i, doc in enumerate(match.candidates)}
            docs = " OR ".join(f"{alias}.payload @> %(pm{i})s::jsonb" for i in range(len(match.candidates)))
            return f"({docs})", params
        # a masked key is never an oracle for its value: search it as plain text instead
    pattern = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    fields = ("id", "title", "kind", "source", "idempotency_key", "payload::text")
    text = " OR ".join(f"{alias}.{c} ILIKE %(pattern)s" for c in fields)
    return f"({text})", {"pattern": pattern}


def _branches(query: Query) -> tuple[str, str]:
    """The FROM clause of the per-endpoint (and per-state) lateral scan, and its branch predicate.

    One state is a literal (``t.state = 'pending'``), so the planner can use the partial indexes
    (``todos_pending``, ``todos_claimed``); several states are a second ``unnest``.
    """
    source = "unnest(%(eps)s::uuid[]) AS e(id)"
    pred = ""
    if query.by_queue:
        source = "unnest(%(eps)s::uuid[], %(queues)s::text[]) AS e(id, queue)"
        pred = " AND t.queue = e.queue"
    if query.states is None:
        return source, pred
    if len(query.states) == 1 and query.states[0] in STORE_STATES:
        return source, pred + f" AND t.state = '{query.states[0]}'"
    return f"{source} CROSS JOIN unnest(%(states)s::text[]) AS s(state)", pred + " AND t.state = s.state"


def _keyset(columns: tuple[str, ...], op: str, cursor: Cursor, params: dict, name: str) -> str:
    values = {"priority": cursor.priority, "created_at": cursor.created_at, "id": cursor.id}
    holders = []
    for col in columns:
        params[f"{name}_{col}"] = values[col]
        holders.append(f"%({name}_{col})s")
    cols = ", ".join(f"t.{c}" for c in columns)
    condition = f"({cols}) {op} ({', '.join(holders)})"
    if columns[0] == "priority":
        # todos_pending ends in (priority, created_at) without id: this looser prefix is what its
        # index scan can start from; the exact comparison above then drops the ties already shown.
        condition += f" AND (t.priority, t.created_at) {op}= ({holders[0]}, {holders[1]})"
    return condition


QUEUE_PAIRS_SQL = """
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


def queue_pairs(query: Query) -> None:
    """Branch a pending list per (endpoint, queue), so priority order comes straight from
    ``todos_pending (endpoint_id, queue, priority, created_at)``. The queues holding pending work
    are found with a loose index scan: one index probe per distinct queue, not per row."""
    with pool().connection() as conn:
        rows = conn.execute(QUEUE_PAIRS_SQL, {"eps": query.endpoint_ids}).fetchall()
    query.params["eps"] = [r["endpoint_id"] for r in rows]
    query.params["queues"] = [r["queue"] for r in rows]
    query.by_queue = True


def _order(columns: tuple[str, ...], direction: str, alias: str = "t") -> str:
    return ", ".join(f"{alias}.{c} {direction}" for c in columns)


def _scan_sql(
    query: Query, *, columns, direction, keyset: str | None, limit_param: str, select: str, ordered: bool = True
) -> str:
    """The first ``limit`` rows of the filter in ``columns`` order: one ordered, limited index
    scan per branch (endpoint, and state or queue), merged. ``ordered=False`` leaves the merged
    rows unordered, so that a count stops as soon as it has ``limit`` of them."""
    if query.mine:
        return _mine_scan_sql(
            query,
            columns=columns,
            direction=direction,
            keyset=keyset,
            limit_param=limit_param,
            select=select,
            ordered=ordered,
        )
    if query.flat:
        where = ["t.endpoint_id = ANY(%(eps)s::uuid[])"] + [f"t.state = '{s}'" for s in query.states or ()]
        where += query.predicates + ([keyset] if keyset else [])
        order = f"ORDER BY {_order(columns, direction)}\n" if ordered else ""
        return f"""
SELECT {select} FROM todos t
WHERE {" AND ".join(where)}
{order}LIMIT %({limit_param})s"""
    source, state_pred = _branches(query)
    where = ["t.endpoint_id = e.id" + state_pred] + query.predicates + ([keyset] if keyset else [])
    order_inner = _order(columns, direction)
    order_outer = f"ORDER BY {_order(columns, direction, 'x')}\n" if ordered else ""
    return f"""
SELECT x.* FROM {source}
CROSS JOIN LATERAL (
    SELECT {select} FROM todos t
    WHERE {" AND ".join(where)}
    ORDER BY {order_inner}
    LIMIT %({limit_param})s
) x
{order_outer}LIMIT %({limit_param})s"""


def _mine_scan_sql(query: Query, *, columns, direction, keyset, limit_param, select, ordered) -> str:
    """``mine`` driven by the human's own rows instead of the endpoints' histories.

    Assigned to the human: one ordered scan per state of ``todos_assignee_state_created``, kept to
    the viewer's endpoints. Leased by the human and assigned to someone else (or no one): the
    claimed rows, bounded by the leases in flight (``todos_claimed``). Filtering the endpoints'
    scans by the human instead read each endpoint's whole history when the human had fewer than a
    page of rows there (11 s for one team at 5M todos).
    """
    states = list(query.states) if query.states is not None else list(STORE_STATES)
    query.params["mine_states"] = states
    extra = query.predicates + ([keyset] if keyset else [])
    order_inner = _order(columns, direction)
    assigned = " AND ".join(
        ["t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])"] + extra
    )
    parts = [
        f"""
    SELECT y.* FROM unnest(%(mine_states)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT {select} FROM todos t WHERE {assigned}
        ORDER BY {order_inner} LIMIT %({limit_param})s
    ) y"""
    ]
    if "claimed" in states:
        leased = " AND ".join(
            [
                "t.state = 'claimed' AND t.owner = %(me)s AND t.assignee IS DISTINCT FROM %(me)s",
                "t.endpoint_id = ANY(%(eps)s::uuid[])",
            ]
            + extra
        )
        parts.append(f"""
    (SELECT {select} FROM todos t WHERE {leased}
     ORDER BY {order_inner} LIMIT %({limit_param})s)""")
    order_outer = f"ORDER BY {_order(columns, direction, 'x')}\n" if ordered else ""
    return f"""
SELECT x.* FROM ({" UNION ALL ".join(parts)}
) x
{order_outer}LIMIT %({limit_param})s"""


def _flip(direction: str) -> str:
    return "ASC" if direction == "DESC" else "DESC"


def list_page(viewer: Viewer, f: TodoFilter, *, page_size: int = PAGE_SIZE) -> Page:
    """One keyset page of the filtered list, plus the cursors around it."""
    query = build_query(viewer, f)
    errors = tuple(f.errors) + tuple(query.errors)
    if not query.endpoint_ids:
        return Page([], None, None, None, errors=errors)
    columns, direction = ORDERS[f.sort]
    if f.sort == "priority" and f.state == "pending" and not f.queue and not f.mine:
        queue_pairs(query)
    backwards = f.before is not None
    scan_direction = _flip(direction) if backwards else direction
    keyset = None
    if f.after is not None:
        keyset = _keyset(columns, "<" if direction == "DESC" else ">", f.after, query.params, "c")
    elif f.before is not None:
        keyset = _keyset(columns, ">" if direction == "DESC" else "<", f.before, query.params, "c")
    params = query.params
    params["limit"] = page_size + 1
    select = f"{ROW_SELECT}, {LAPSED}"
    scanned_to_limit = False
    if query.search is None:
        sql = _scan_sql(
            query, columns=columns, direction=scan_direction, keyset=keyset, limit_param="limit", select=select
        )
        with pool().connection() as conn:
            rows = [TodoRow.from_row(r) for r in conn.execute(sql, params).fetchall()]
        more = len(rows) > page_size
        rows = rows[:page_size]
        edge = None
    else:
        params["scan"] = SEARCH_SCAN_ROWS
        # The window is chosen on index columns alone (an index-only scan per branch), and only
        # its SEARCH_SCAN_ROWS rows are read from the table to be searched: choosing it on whole
        # rows read that many rows per endpoint (50 endpoints: 100,000 rows, ~250 ms at 5M todos).
        keys = _scan_sql(
            query,
            columns=columns,
            direction=scan_direction,
            keyset=keyset,
            limit_param="scan",
            select=", ".join(f"t.{c}" for c in columns),
        )
        order = _order(columns, scan_direction, "w")
        last = _order(columns, _flip(scan_direction), "w")
        sql = f"""
WITH window_keys AS MATERIALIZED ({keys}),
window_rows AS MATERIALIZED (
    SELECT {select}, t.source, t.idempotency_key, t.payload FROM window_keys k JOIN todos t ON t.id = k.id
),
matched AS (
    SELECT w.*, false AS is_edge FROM window_rows w
    WHERE {search_predicate(f.q, viewer, "w")[0]}
    ORDER BY {order} LIMIT %(limit)s
),
edge AS (
    SELECT w.*, true AS is_edge FROM window_rows w
    WHERE (SELECT count(*) FROM window_rows) >= %(scan)s
    ORDER BY {last} LIMIT 1
)
SELECT * FROM matched UNION ALL SELECT * FROM edge"""
        with pool().connection() as conn:
            raw = conn.execute(sql, params).fetchall()
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
    )


def rows_newer_than(viewer: Viewer, f: TodoFilter, cursor: Cursor, *, limit: int = NEWER_LIMIT) -> list[TodoRow]:
    """Rows created after ``cursor`` that match the filter, newest first (for live inserts)."""
    query = build_query(viewer, f)
    if not query.endpoint_ids:
        return []
    columns = ("created_at", "id")
    keyset = _keyset(columns, ">", Cursor(cursor.created_at, cursor.id), query.params, "n")
    if query.search:
        query.predicates.append(query.search)  # the set newer than a page is small: no window
    query.params["limit"] = limit
    sql = _scan_sql(
        query, columns=columns, direction="DESC", keyset=keyset, limit_param="limit", select=f"{ROW_SELECT}, {LAPSED}"
    )
    with pool().connection() as conn:
        return [TodoRow.from_row(r) for r in conn.execute(sql, query.params).fetchall()]


def get_row(viewer: Viewer, todo_id: str) -> TodoRow | None:
    """One row of the list, or None when it does not exist or belongs to another team."""
    if not viewer.endpoint_ids or not isinstance(todo_id, str) or len(todo_id) > 64:
        return None
    sql = f"SELECT {ROW_SELECT}, {LAPSED} FROM todos t WHERE t.id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])"
    with pool().connection() as conn:
        row = conn.execute(sql, {"id": todo_id, "eps": viewer.endpoint_ids}).fetchone()
    return TodoRow.from_row(row) if row else None


# --- counts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    """A count that may have stopped at ``cap``: then it reads "1,000+"."""

    value: int
    capped: bool
    cap: int = COUNT_CAP

    def __str__(self) -> str:
        return f"{self.cap:,}+" if self.capped else f"{self.value:,}"


def capped_count_sql(query: Query, cap_param: str = "cap") -> str:
    """Count the rows of ``query`` up to a cap, walking an index in order per branch.

    Each branch is ``ORDER BY created_at LIMIT cap`` on one endpoint (and state, or queue): an
    ordered index scan that stops after ``cap`` entries. A bare ``count(*) … LIMIT`` lets the
    planner pick a sequential scan that, for a rare state, reads the whole table before it can
    say "0"; the ordered branch cannot.
    """
    return (
        "SELECT count(*) AS n FROM ("
        + _scan_sql(
            query,
            columns=("created_at", "id"),
            direction="ASC",
            keyset=None,
            limit_param=cap_param,
            select="t.created_at, t.id",
            ordered=False,
        )
        + ") counted"
    )


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _own_params(sql: str, params: dict, suffix: str) -> tuple[str, dict]:
    """``sql`` with each ``%(name)s`` renamed ``%(name_suffix)s``, and those parameters: so that
    statements built separately can run as parts of one."""
    names = set(_PLACEHOLDER.findall(sql))
    return (
        _PLACEHOLDER.sub(lambda m: f"%({m.group(1)}_{suffix})s", sql),
        {f"{name}_{suffix}": params[name] for name in names},
    )


# The relay's counts (todo_counts) under the list's filters that they can answer: team and
# endpoint (the endpoint set), queue, state. One statement, O(endpoints × queues × states).
COUNTS_SQL = """
SELECT state, sum(n)::bigint AS n FROM todo_counts
WHERE endpoint_id = ANY(%(eps)s::uuid[]) AND (%(queue)s::text IS NULL OR queue = %(queue)s)
GROUP BY state"""


def state_counts(viewer: Viewer, f: TodoFilter) -> dict[str, Count]:
    """Per state tab: the count under the current filter, the search aside (tabs count the filter
    without its text; the page says so).

    Exact, from the relay's counts, unless "assigned to me" is on: counts cannot answer it, so
    those tabs count the rows themselves, exact up to COUNT_CAP (claimed: always exact) and "1,000+"
    beyond. Either way one statement: one round trip and one snapshot for the seven numbers.
    """
    keys = ("all",) + tuple(STATE_PREDICATES)  # "all" first, as the tabs show them
    unsearched = dataclasses.replace(f, q="")
    if not f.mine:
        query = build_query(viewer, dataclasses.replace(unsearched, state="all"))
        if not query.endpoint_ids:
            return {key: Count(0, False) for key in keys}
        with pool().connection() as conn:
            rows = conn.execute(COUNTS_SQL, {"eps": query.endpoint_ids, "queue": f.queue or None}).fetchall()
        by_state = {row["state"]: row["n"] for row in rows}
        exact = {key: Count(by_state.get(key, 0), False) for key in STATE_PREDICATES}
        return {"all": Count(sum(c.value for c in exact.values()), False), **exact}
    return _scanned_counts(viewer, unsearched, keys)


def _scanned_counts(viewer: Viewer, f: TodoFilter, keys: tuple[str, ...]) -> dict[str, Count]:
    """The tabs' counts by scanning the rows, each capped at COUNT_CAP (for "assigned to me")."""
    counts: dict[str, Count] = {}
    parts: list[str] = []
    params: dict = {"cap": COUNT_CAP + 1}
    for key in keys:
        query = build_query(viewer, dataclasses.replace(f, state=key))
        if not query.endpoint_ids:
            counts[key] = Count(0, False)
            continue
        mine = [query.mine_predicate] if query.mine else []
        if key in EXACT_COUNTS:
            store_state, _ = STATE_PREDICATES[key]
            where = " AND ".join(
                [f"t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = '{store_state}'"] + query.predicates + mine
            )
            sql = f"SELECT count(*) FROM todos t WHERE {where}"
        else:
            sql = capped_count_sql(query)  # the retry tab: a flat scan of todos_retry_due (build_query)
        sql, own = _own_params(sql, dict(query.params, cap=COUNT_CAP + 1), key)
        parts.append(f'({sql}) AS "{key}"')
        params.update(own)
    if parts:
        with pool().connection() as conn:
            row = conn.execute("SELECT " + ",\n       ".join(parts), params).fetchone()
        for key in keys:
            if key in counts:
                continue
            n = row[key]
            counts[key] = Count(n, False) if key in EXACT_COUNTS else Count(min(n, COUNT_CAP), n > COUNT_CAP, COUNT_CAP)
    return {key: counts[key] for key in keys}


# --- the drawer ---------------------------------------------------------------------------------

DETAIL_SQL = f"""
SELECT {ROW_SELECT}, {LAPSED}, t.source, t.payload, t.idempotency_key, t.attempts_pruned, t.result,
       e.team_id,
       EXISTS (SELECT 1 FROM queue_pauses qp WHERE qp.team_id = e.team_id AND qp.queue = t.queue) AS paused
FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
WHERE t.id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])"""


def get_detail(viewer: Viewer, todo_id: str) -> TodoDetail | None:
    if not viewer.endpoint_ids or not isinstance(todo_id, str) or len(todo_id) > 64:
        return None
    with pool().connection() as conn:
        row = conn.execute(DETAIL_SQL, {"id": todo_id, "eps": viewer.endpoint_ids}).fetchone()
    return TodoDetail(**{f.name: row[f.name] for f in dataclasses.fields(TodoDetail)}) if row else None


@dataclass(frozen=True)
class AttemptRow(Attempt):
    """An attempt as the drawer shows it: the store's record plus whether an open lease has
    already lapsed (the holder is presumed dead before the reaper or a takeover says so)."""

    lease_lapsed: bool = False


# Never the lease token hash, the claimer session or the claimer endpoint id.
ATTEMPTS_SQL = """
SELECT a.seq, a.attempt, a.claimer_kind, a.owner, a.claimant, a.claimed_at, a.last_heartbeat_at,
       a.lease_expires_at, a.ended_at, a.outcome, a.disposition, a.summary, a.summary_truncated,
       a.artifact, (a.ended_at IS NULL AND a.lease_expires_at < now()) AS lease_lapsed
FROM todo_attempts a
WHERE a.todo_id = %(id)s
ORDER BY a.seq DESC
LIMIT %(limit)s"""


def attempts(todo: TodoRow, *, limit: int = ATTEMPTS_SHOWN) -> list[AttemptRow]:
    """The attempt history, newest first, open attempt included. ``todo`` comes from
    :func:`get_detail`, which already checked that the viewer may see it."""
    with pool().connection() as conn:
        rows = conn.execute(ATTEMPTS_SQL, {"id": todo.id, "limit": limit}).fetchall()
    return [AttemptRow(**row) for row in rows]


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: datetime
    actor: str
    user_id: int | None
    action: str
    todo_id: str | None
    endpoint_id: UUID | None
    queue: str | None
    note: str | None
    detail: Any
    team_id: UUID


AUDIT_COLUMNS = (
    "l.id, l.at, l.actor, l.user_id, l.action, l.todo_id, l.endpoint_id, l.queue, l.note, l.detail, l.team_id"
)


def todo_audit(viewer: Viewer, todo: TodoRow, *, limit: int = AUDIT_SHOWN) -> list[AuditRow]:
    """Human actions on one todo (served by ``audit_log_todo``), scoped to the viewer's teams."""
    sql = f"""SELECT {AUDIT_COLUMNS} FROM audit_log l
WHERE l.todo_id = %(id)s AND l.team_id = ANY(%(teams)s::uuid[])
ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s"""
    with pool().connection() as conn:
        rows = conn.execute(sql, {"id": todo.id, "teams": viewer.team_ids, "limit": limit}).fetchall()
    return [AuditRow(**row) for row in rows]


def paused_queues(viewer: Viewer) -> set[tuple[UUID, str]]:
    """(team id, queue) pairs paused for the viewer's teams: the list marks their rows."""
    if not viewer.team_ids:
        return set()
    with pool().connection() as conn:
        rows = conn.execute(
            "SELECT team_id, queue FROM queue_pauses WHERE team_id = ANY(%s::uuid[])", (viewer.team_ids,)
        ).fetchall()
    return {(row["team_id"], row["queue"]) for row in rows}


# --- bulk actions -------------------------------------------------------------------------------

# What each bulk action can change (the store's guards, repeated so previews count honestly).
BULK_ELIGIBLE = {
    "retry": "t.state = 'failed'",
    "cancel": "t.state IN ('pending', 'claimed', 'failed')",
}


def _bulk_query(viewer: Viewer, f: TodoFilter, action: str) -> Query:
    acting = [e.id for e in viewer.acting_endpoints()]
    query = build_query(viewer, f.first_page(), endpoints=acting)
    query.predicates.append(BULK_ELIGIBLE[action])
    if query.search:
        query.predicates.append(query.search)  # a background job may scan further than a page
        query.search = None
    return query


def visible_ids(viewer: Viewer, ids: list) -> list[str]:
    """The selected ids the viewer can see, in their order (foreign and unknown ids drop out alike)."""
    ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and 0 < len(i) <= 64]
    if not ids or not viewer.endpoint_ids:
        return []
    with pool().connection() as conn:
        rows = conn.execute(
            "SELECT id FROM todos WHERE id = ANY(%s::text[]) AND endpoint_id = ANY(%s::uuid[])",
            (ids, viewer.endpoint_ids),
        ).fetchall()
    found = {r["id"] for r in rows}
    return [i for i in ids if i in found]


def count_eligible(viewer: Viewer, ids: list[str], action: str) -> int:
    """How many of ``ids`` a bulk ``action`` would change now: on endpoints the viewer may act on."""
    acting = [e.id for e in viewer.acting_endpoints()]
    if not ids or not acting:
        return 0
    sql = (
        f"SELECT count(*) AS n FROM todos t WHERE t.id = ANY(%s::text[]) AND t.endpoint_id = ANY(%s::uuid[])"
        f" AND {BULK_ELIGIBLE[action]}"
    )
    with pool().connection() as conn:
        return conn.execute(sql, (ids, acting)).fetchone()["n"]


def count_matching(viewer: Viewer, f: TodoFilter, action: str, *, cap: int) -> Count:
    """How many rows a bulk action on "everything matching" would touch (capped)."""
    query = _bulk_query(viewer, f, action)
    if not query.endpoint_ids:
        return Count(0, False)
    if query.mine:
        sql = capped_count_sql(query)
    else:
        source, state_pred = _branches(query)
        where = " AND ".join(["t.endpoint_id = e.id" + state_pred] + query.predicates)
        sql = f"SELECT count(*) AS n FROM (SELECT 1 FROM {source} CROSS JOIN LATERAL (SELECT 1 FROM todos t WHERE {where}) x LIMIT %(cap)s) c"
    with pool().connection() as conn:
        n = conn.execute(sql, dict(query.params, cap=cap + 1)).fetchone()["n"]
    return Count(min(n, cap), n > cap, cap)


def iter_matching_ids(
    viewer: Viewer, f: TodoFilter, action: str, *, limit: int, chunk: int = 5000
) -> Iterator[list[str]]:
    """The ids a bulk action on "everything matching" covers, newest first, in keyset chunks."""
    query = _bulk_query(viewer, f, action)
    if not query.endpoint_ids:
        return
    columns = ("created_at", "id")
    cursor: Cursor | None = None
    seen = 0
    while seen < limit:
        params = dict(query.params)
        params["limit"] = min(chunk, limit - seen)
        keyset = _keyset(columns, "<", cursor, params, "b") if cursor else None
        sql = _scan_sql(
            query, columns=columns, direction="DESC", keyset=keyset, limit_param="limit", select="t.id, t.created_at"
        )
        with pool().connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        if not rows:
            return
        seen += len(rows)
        yield [r["id"] for r in rows]
        if len(rows) < params["limit"]:
            return
        cursor = Cursor(rows[-1]["created_at"], rows[-1]["id"])

"""Dead letters grouped by failure reason.

A dead letter's reason is its last attempt's error object as ``type: first line of message``,
else its summary, else ``result.error`` (``failure_reason.py``). Reasons are normalised into a
fingerprint (lower case; UUIDs, hex runs and digits replaced) so "timeout after 30s on 10.0.0.7"
and "timeout after 45s on 10.0.0.9" land in one group. Grouping reads at most ``GROUP_SCAN_ROWS``
dead letters (newest first) of the current filter, and says so when it stopped there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString

from todos.core import compose
from todos.core.compose import Params
from todos.core.filters import Cursor, TodoFilter
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.failure_reason import FINGERPRINT, REASON
from todos.core.selectors.scans import scan_sql
from todos.core.selectors.todo_query import build_query

GROUP_SCAN_ROWS = 5_000
GROUPS_SHOWN = 100


@dataclass(frozen=True)
class Group:
    fingerprint: str
    count: int
    example_reason: str
    example_id: str
    example_title: str


def _window_sql(viewer: Viewer, f: TodoFilter, limit: int) -> tuple[LiteralString, Params] | None:
    """The newest ``limit`` dead letters matching the filter, with each one's reason."""
    query = build_query(viewer, dataclasses.replace(f.first_page(), state="dead")).searched_everywhere()
    if not query.endpoint_ids:
        return None
    params = Params(query.params)
    inner = scan_sql(
        query,
        columns=("created_at", "id"),
        direction="DESC",
        keyset=None,
        limit=params.bind("scan", limit),
        select="t.id, t.title, t.result, t.attempts_total, t.created_at",
    )
    sql: LiteralString = f"""
WITH d AS MATERIALIZED ({inner}),
r AS (
    SELECT d.id, d.title, d.created_at,
           {REASON} AS reason,
           {FINGERPRINT} AS fingerprint
    FROM d LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
)"""
    return sql, params


def groups(viewer: Viewer, f: TodoFilter) -> tuple[list[Group], bool]:
    """The groups (largest first) and whether the scan stopped at GROUP_SCAN_ROWS."""
    built = _window_sql(viewer, f, GROUP_SCAN_ROWS)
    if built is None:
        return [], False
    head, params = built
    sql = (
        head
        + f"""
SELECT g.fingerprint, g.n AS count, ex.reason AS example_reason, ex.id AS example_id, ex.title AS example_title,
       (SELECT count(*) FROM d) AS scanned
FROM (SELECT fingerprint, count(*) AS n, max(created_at) AS newest FROM r GROUP BY fingerprint) g
CROSS JOIN LATERAL (
    SELECT r.reason, r.id, r.title FROM r WHERE r.fingerprint = g.fingerprint ORDER BY r.created_at DESC LIMIT 1
) ex
ORDER BY g.n DESC, g.newest DESC
LIMIT {compose.integer(GROUPS_SHOWN)}"""
    )
    with read_connection() as conn:
        rows = conn.execute(sql, params).fetchall()
    capped = bool(rows) and rows[0]["scanned"] >= GROUP_SCAN_ROWS
    return [
        Group(r["fingerprint"], r["count"], r["example_reason"], r["example_id"], r["example_title"]) for r in rows
    ], capped


def group_ids(viewer: Viewer, f: TodoFilter, fingerprint: str, *, acting_only: bool = True) -> Iterator[list[str]]:
    """The ids of one group (for its bulk actions), in chunks."""
    if acting_only:
        acting = {e.id for e in viewer.acting_endpoints()}
        viewer = dataclasses.replace(
            viewer, endpoints=tuple(e for e in viewer.endpoints if e.id in acting), _teams_by_id={}, _endpoints_by_id={}
        )
    built = _window_sql(viewer, f, GROUP_SCAN_ROWS)
    if built is None:
        return
    head, params = built
    fingerprint_is = params.bind("fingerprint", fingerprint)
    members = f"{head}\nSELECT id FROM r WHERE fingerprint = {fingerprint_is} ORDER BY created_at DESC"
    with read_connection() as conn:
        rows = conn.execute(members, params).fetchall()
    ids = [r["id"] for r in rows]
    for start in range(0, len(ids), 5000):
        yield ids[start : start + 5000]


def group_count(viewer: Viewer, f: TodoFilter, fingerprint: str) -> int:
    return sum(len(chunk) for chunk in group_ids(viewer, f, fingerprint))


MEMBERS_PAGE = 50


@dataclass(frozen=True)
class Member:
    id: str
    title: str
    queue: str
    created_at: datetime
    reason: str


def group_members(
    viewer: Viewer, f: TodoFilter, fingerprint: str, *, after: Cursor | None = None, limit: int = MEMBERS_PAGE
) -> tuple[list[Member], Cursor | None]:
    """One keyset page (newest first) of a reason group's dead letters, over the same window the
    groups were counted in, and the cursor of the next page (None on the last)."""
    built = _window_sql(viewer, f, GROUP_SCAN_ROWS)
    if built is None:
        return [], None
    head, params = built
    fingerprint_is = params.bind("fingerprint", fingerprint)
    keyset: LiteralString = "TRUE"
    if after is not None:
        keyset = (
            f"(m.created_at, m.id) < ({params.bind('after_at', after.created_at)}, {params.bind('after_id', after.id)})"
        )
    sql: LiteralString = f"""{head}
SELECT m.id, t.title, t.queue, m.created_at, m.reason
FROM r m JOIN todos t ON t.id = m.id
WHERE m.fingerprint = {fingerprint_is} AND {keyset}
ORDER BY m.created_at DESC, m.id DESC
LIMIT {params.bind("limit", limit + 1)}"""
    with read_connection() as conn:
        rows = conn.execute(sql, params).fetchall()
    members = [Member(**row) for row in rows[:limit]]
    more = len(rows) > limit
    return members, (Cursor(members[-1].created_at, members[-1].id) if more and members else None)


REASONS_SQL: LiteralString = f"""
SELECT d.id, {REASON} AS reason, a.outcome
FROM todos d LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
WHERE d.id = ANY(%(ids)s::text[])"""


@dataclass(frozen=True)
class DeadReason:
    text: str
    # the last attempt's outcome: ``failed`` when the worker reported the failure, ``timed_out``
    # when it ran past its run-time limit, a lapse (``lease_expired``, ``reaped``) when it died;
    # None when no attempt ran (a revoked endpoint)
    outcome: str | None


def reasons(ids: list[str]) -> dict[str, DeadReason]:
    """Why each of these dead letters ended (its last attempt's error, summary or
    ``result.error``) and how its last attempt ended, for the list's rows: one query for a page.
    The caller passes ids it has already read."""
    if not ids:
        return {}
    with read_connection() as conn:
        rows = conn.execute(REASONS_SQL, {"ids": ids}).fetchall()
    return {row["id"]: DeadReason(row["reason"], row["outcome"]) for row in rows}

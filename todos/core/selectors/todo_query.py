"""The todo list's filter as a query value: which endpoints to scan, and what each row must match.

:func:`build_query` turns a :class:`~todos.core.filters.TodoFilter` into a :class:`TodoQuery` once;
the scans (``scans.py``), the page (``todo_list.py``), the counts (``todo_counts.py``) and the bulk
reads (``bulk_targets.py``) all read the same value. It is immutable: a caller that needs one
more predicate or parameter gets a new query (:meth:`TodoQuery.where`, :meth:`TodoQuery.bind`),
so no caller sees another's additions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, LiteralString
from uuid import UUID

from django.conf import settings

from todos.core.compose import TODO_STATES, Params
from todos.core.filters import TodoFilter, parse_payload_match
from todos.core.selectors.access import Viewer
from todos.core.selectors.reason_filter import failed_with_predicate

# Board state → (the store's state, an extra predicate): ``failed`` splits in two on the retry window,
# ``pending`` on the schedule (the same column: the time the todo waits for).
STATE_PREDICATES: dict[str, tuple[str, LiteralString | None]] = {
    "pending": ("pending", "t.next_retry_at IS NULL"),
    "blocked": ("pending", "t.next_retry_at = 'infinity'"),
    "scheduled": ("pending", "t.next_retry_at < 'infinity'"),  # a time, not a blocked todo's never
    "claimed": ("claimed", None),
    "retry": ("failed", "t.next_retry_at IS NOT NULL"),
    "dead": ("failed", "t.next_retry_at IS NULL"),
    "done": ("done", None),
    "canceled": ("canceled", None),
}

FULL_ID_RE = re.compile(r"^td_[0-9a-f]{32}$")


@dataclass(frozen=True)
class TodoQuery:
    """The filter as SQL: the endpoints to scan, per-row predicates, their parameters.

    ``states`` decides the branches: ``None`` scans each endpoint's whole history, otherwise one
    branch per (endpoint, state). ``search`` is kept apart from ``predicates`` because a list
    applies it to a bounded window of rows (``todo_list.py``) while a bulk read applies it to all.
    """

    endpoint_ids: tuple[UUID, ...]
    states: tuple[str, ...] | None
    predicates: tuple[LiteralString, ...]
    params: Mapping[str, Any]
    search: LiteralString | None = None
    errors: tuple[str, ...] = ()
    mine: bool = False  # assigned to the viewer or leased by them (param "me"): see scans.scan_sql
    flat: bool = False  # one scan over all the endpoints (a small partial index): see scans.scan_sql
    # Branches per (endpoint, queue) pair, in params "eps"/"queues" (see scans.by_queue)
    by_queue: bool = False
    # Planned for its values on every execution, never prepared: see :attr:`prepare`
    planned_per_values: bool = False

    def where(self, *predicates: LiteralString) -> TodoQuery:
        return dataclasses.replace(self, predicates=self.predicates + predicates)

    def bind(self, **values: Any) -> TodoQuery:
        params = Params(self.params)
        for name, value in values.items():
            params[name] = value
        return dataclasses.replace(self, params=MappingProxyType(dict(params)))

    def searched_everywhere(self) -> TodoQuery:
        """The search as one more predicate: for reads that must see every match, not a window."""
        if self.search is None:
            return self
        return dataclasses.replace(self.where(self.search), search=None)

    @property
    def prepare(self) -> bool | None:
        """psycopg's ``prepare`` for this query's statements: ``False`` (never prepared) when the
        best plan depends on the values bound. A finished range is one: planned for its values,
        each endpoint is walked newest first from the range's end; the generic plan a prepared
        statement falls back to, blind to the range's width, read each endpoint's whole day from
        ``todos_endpoint_finished`` and sorted it (124,180 buffers for five teams, against 3,422).
        ``None`` keeps the pool's default (prepared after a few executions)."""
        return False if self.planned_per_values else None

    @property
    def mine_predicate(self) -> LiteralString | None:
        """``mine`` as a plain predicate, for statements over small sets (leases in flight)."""
        return "(t.assignee = %(me)s OR t.owner = %(me)s)" if self.mine else None


def build_query(viewer: Viewer, f: TodoFilter, *, endpoints: list[UUID] | None = None) -> TodoQuery:
    errors: list[str] = []
    eps = endpoints if endpoints is not None else viewer.endpoint_ids
    if f.team:
        team = viewer.team_by_slug(f.team)
        if team is None:
            errors.append(f"team: you are not a member of a team {f.team!r}")
            eps = []
        else:
            of_team = {e.id for e in viewer.endpoints if e.team_id == team.id}
            eps = [e for e in eps if e in of_team]
    if f.endpoint:
        ep = viewer.endpoint_by_slug(f.endpoint)
        if ep is None:
            errors.append(f"endpoint: none of your teams has an endpoint {f.endpoint!r}")
            eps = []
        else:
            eps = [e for e in eps if e == ep.id]
    params = Params(eps=list(eps))
    predicates: list[LiteralString] = []
    states: tuple[str, ...] | None = None
    if f.state != "all":
        store_state, extra = STATE_PREDICATES[f.state]
        states = (store_state,)
        if extra:
            predicates.append(extra)
    if f.queue:
        predicates.append(f"t.queue = {params.bind('queue', f.queue)}")
        if states is None:
            states = TODO_STATES  # the (endpoint, queue, state, created_at) index needs a state
    if f.mine:
        params.bind("me", viewer.owner)
    predicates += row_predicates(f, params)
    if f.failed_with and states in (None, TODO_STATES):
        # Only failed todos have a reason group: each branch walks the endpoint's failed rows
        # (todos_endpoint_state_created) instead of its whole history.
        states = ("failed",)
    search = None
    if f.q:
        search, exact = search_predicate(f.q, viewer, params)
        if exact:
            predicates.append(search)  # a whole id: a primary-key probe, no scan window needed
            search = None
    # Retry windows and schedules are a small partial index (todos_retry_due); walking each endpoint's failed rows
    # newest first to find them read its dead letters too (10 ms with 100,000 of them).
    return TodoQuery(
        endpoint_ids=tuple(eps),
        states=states,
        predicates=tuple(predicates),
        params=MappingProxyType(dict(params)),
        search=search,
        errors=tuple(errors),
        mine=f.mine,
        flat=f.state in ("retry", "scheduled"),
        planned_per_values=any(bound is not None for bound in f.day_bounds("finished")),
    )


def row_predicates(f: TodoFilter, params: Params) -> list[LiteralString]:
    """The filters on a todo's own columns: kind, priority, the created and finished days, and
    the dead-letter reason group it failed with."""
    predicates: list[LiteralString] = []
    if f.kind:
        predicates.append(f"t.kind = {params.bind('kind', f.kind)}")
    if f.priority is not None:
        low, high = params.bind("priority_low", f.priority.low), params.bind("priority_high", f.priority.high)
        if f.priority.low == f.priority.high:
            # an equality, so todos_endpoint_priority hands each endpoint's rows over in created order
            # (a BETWEEN, even of one value, made each branch read and sort all of them)
            predicates.append(f"t.priority = {low}")
        else:
            predicates.append(f"t.priority BETWEEN {low} AND {high}")
        if f.priority.low > 0 or f.priority.high < 0:
            # said in so many words, so a prepared (generic) plan can still use todos_endpoint_priority
            predicates.append("t.priority <> 0")
    # created_at leads the lists' per-endpoint indexes after the endpoint (and state): a range on it
    # bounds each branch's index scan instead of filtering the rows it reads.
    created_from, created_before = f.day_bounds("created")
    if created_from is not None:
        predicates.append(f"t.created_at >= {params.bind('created_from', created_from)}")
    if created_before is not None:
        predicates.append(f"t.created_at < {params.bind('created_before', created_before)}")
    finished_from, finished_before = f.day_bounds("finished")
    if finished_from is not None:
        predicates.append(f"t.completed_at >= {params.bind('finished_from', finished_from)}")
    if finished_before is not None:
        before = params.bind("finished_before", finished_before)
        predicates.append(f"t.completed_at < {before}")
        # A todo finishes after it is created: the bound lets each endpoint's newest-first walk
        # start at the range's end instead of reading everything created since.
        predicates.append(f"t.created_at < {before}")
    if f.failed_with:
        predicates.append(failed_with_predicate(params.bind("failed_with", f.failed_with)))
    return predicates


def attempt_text_match(alias: LiteralString, phrase: LiteralString) -> LiteralString:
    """Any attempt of the todo ``alias`` whose text holds ``phrase`` (a bound placeholder) as a
    phrase: the words in that order, next to each other, within one of its texts.

    Each attempt's texts (summary, error type, the type with its dots as spaces, message) are
    stored parsed, as ``todo_attempts.search_doc`` (migration 0034): NULL for an attempt that said
    nothing. A todo never claimed (``attempts_total = 0``: most of the live edge, pending) has no
    attempt to read: the test says so from the row, without a probe of the attempts' key per todo."""
    return f"""({alias}.attempts_total > 0 AND EXISTS (
        SELECT 1 FROM todo_attempts a
        WHERE a.todo_id = {alias}.id
          AND a.search_doc @@ phraseto_tsquery('simple', {phrase})))"""


def search_predicate(q: str, viewer: Viewer, params: Params, alias: LiteralString = "t") -> tuple[LiteralString, bool]:
    """The search box as SQL over table alias ``alias``: a whole todo id (then the second value is
    True), a ``key=value`` payload containment, or text (ILIKE) over id, title, kind, source,
    idempotency key and payload. Binds its values into ``params``."""
    if FULL_ID_RE.match(q):
        return f"{alias}.id = {params.bind('exact_id', q)}", True
    match = parse_payload_match(q)
    if match is not None:
        names = match.key.lower().split(".")
        masked = [m.lower() for m in settings.BOARD_MASKED_PAYLOAD_KEYS]
        if not any(m in part for part in names for m in masked):
            docs = params.bind("payload_match", list(match.candidates))
            return f"{alias}.payload @> ANY({docs}::jsonb[])", False
        # a masked key is never an oracle for its value: search it as plain text instead
    pattern = params.bind("pattern", "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    fields: tuple[LiteralString, ...] = ("id", "title", "kind", "source", "idempotency_key", "payload::text")
    tests: list[LiteralString] = [f"{alias}.{c} ILIKE {pattern}" for c in fields]
    phrase = params.bind("phrase", q)
    tests.append(attempt_text_match(alias, phrase))
    text = "\n        OR ".join((" OR ".join(tests[:3]), " OR ".join(tests[3:6]), tests[6]))  # three a line
    return f"({text})", False

"""The todo list's filter, parsed from (and written back to) the querystring.

Filters live in the URL so a view is shareable and the back button works. Parsing never fails:
a value that makes no sense is dropped and reported in ``errors`` ("state: …"), so a hand-edited
URL shows the page with a message naming the problem instead of an error page.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from todos.core.errors import Invalid
from todos.core.store import inputs
from todos.core.store.inputs import PRIORITY_RANGE

# URL value → label. "retry" and "dead" split the store's ``failed`` state (docs/lifecycle.md,
# "Derived states"); "scheduled" is the pending work that waits for its time (``next_retry_at``).
BOARD_STATES = {
    "all": "All",
    "pending": "Pending",
    "blocked": "Blocked",
    "scheduled": "Scheduled",
    "claimed": "Claimed",
    "retry": "Retry scheduled",
    "dead": "Dead letter",
    "done": "Done",
    "canceled": "Canceled",
}
SORTS = {"newest": "Newest first", "oldest": "Oldest first", "priority": "Priority (claim order)"}
SEARCH_MAX_CHARS = 200
# The params a filter owns: everything else in the querystring (fragment=…, newer_than=…) is the
# view's business.
FILTER_PARAMS = (
    "state",
    "queue",
    "endpoint",
    "team",
    "mine",
    "q",
    "kind",
    "priority",
    "created_from",
    "created_to",
    "finished_from",
    "finished_to",
    "failed_with",
    "sort",
)
# The day ranges: (URL param of the first day, of the last day) per column they bound.
DAY_RANGES = {"created": ("created_from", "created_to"), "finished": ("finished_from", "finished_to")}
KIND_MAX_CHARS = 128
REASON_MAX_CHARS = 300  # a reason group's fingerprint is at most this long (selectors.dead_letters)
UTC_ZONE = ZoneInfo("UTC")
PAGE_PARAMS = ("after", "before")


class BadCursor(ValueError):
    pass


@dataclass(frozen=True)
class Cursor:
    """A row's full-precision position in a sort order: (priority,) created_at, id."""

    created_at: datetime
    id: str
    priority: int | None = None

    def encode(self) -> str:
        ts = self.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        head = f"{self.priority}~" if self.priority is not None else ""
        return f"{head}{ts}~{self.id}"

    @classmethod
    def decode(cls, raw: str, *, with_priority: bool) -> Cursor:
        parts = raw.split("~")
        try:
            if with_priority:
                priority, ts, todo_id = parts
                prio = int(priority)
            else:
                ts, todo_id = parts
                prio = None
            created = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        except ValueError:
            raise BadCursor(raw) from None
        if not todo_id or len(todo_id) > 64 or _CONTROL.search(todo_id):
            raise BadCursor(raw)
        if prio is not None and not PRIORITY_RANGE[0] <= prio <= PRIORITY_RANGE[1]:
            raise BadCursor(raw)  # no row has it, and the column could not compare with it
        return cls(created, todo_id, prio)

    @classmethod
    def of(cls, row, *, sort: str) -> Cursor:
        return cls(row.created_at, row.id, row.priority if sort == "priority" else None)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
PAYLOAD_MATCH_RE = re.compile(r"^([A-Za-z_][\w.-]{0,99})=(.*)$", re.S)


@dataclass(frozen=True)
class PayloadMatch:
    """``key=value`` in the search box: a JSON containment test on the payload (``a.b=1`` nests)."""

    key: str
    candidates: tuple  # JSON documents for payload @> …, e.g. {"a": {"b": 1}} and {"a": {"b": "1"}}


def parse_payload_match(q: str) -> PayloadMatch | None:
    match = PAYLOAD_MATCH_RE.match(q)
    if not match:
        return None
    key, raw = match.group(1), match.group(2).strip()
    values: list = []
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    values.append(parsed)
    if not isinstance(parsed, str):
        values.append(raw)  # "5" may be stored as the string "5" as well as the number 5
    docs = []
    for value in values:
        doc = value
        for part in reversed(key.split(".")):
            doc = {part: doc}
        try:
            inputs.json_value("q", doc)  # jsonb refuses NUL and lone surrogates: no such payload
        except Invalid:
            continue
        docs.append(json.dumps(doc))
    if not docs:
        return None
    return PayloadMatch(key=key, candidates=tuple(docs))


@dataclass(frozen=True)
class PriorityRange:
    """``5`` or ``0..10`` in the URL: the priorities from ``low`` to ``high``, both included."""

    low: int
    high: int

    def __str__(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}..{self.high}"


def parse_priority(raw: str) -> PriorityRange:
    """``5``, ``-3`` or ``0..10``; ValueError says what is wrong with it."""
    low_text, dots, high_text = raw.partition("..")
    try:
        low = int(low_text)
        high = int(high_text) if dots else low
    except ValueError:
        raise ValueError("must be a whole number such as 5, or a range such as 0..10") from None
    lo, hi = PRIORITY_RANGE
    if not (lo <= low <= hi and lo <= high <= hi):
        raise ValueError(f"must be from {lo} to {hi}")
    if low > high:
        raise ValueError(f"the range {low}..{high} is empty: write the lower number first")
    return PriorityRange(low, high)


def parse_day(raw: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValueError("must be a day written YYYY-MM-DD") from None


@dataclass(frozen=True)
class TodoFilter:
    state: str = "all"
    queue: str = ""
    endpoint: str = ""  # slug
    team: str = ""  # slug
    mine: bool = False
    q: str = ""
    kind: str = ""
    priority: PriorityRange | None = None
    created_from: date | None = None
    created_to: date | None = None
    finished_from: date | None = None
    finished_to: date | None = None
    failed_with: str = ""  # a dead-letter reason group (its fingerprint)
    sort: str = "newest"
    after: Cursor | None = None
    before: Cursor | None = None
    errors: tuple[str, ...] = field(default=(), compare=False)
    # The zone the day ranges are days of (the view's ``filter_zone``).
    zone: ZoneInfo = field(default=UTC_ZONE, compare=False, repr=False)

    @classmethod
    def from_query(cls, query, *, zone: ZoneInfo = UTC_ZONE) -> TodoFilter:
        errors: list[str] = []
        state = query.get("state") or "all"
        if state not in BOARD_STATES:
            errors.append(f"state: unknown state {state!r}; showing all")
            state = "all"
        sort = query.get("sort") or "newest"
        if sort not in SORTS:
            errors.append(f"sort: unknown order {sort!r}; showing newest first")
            sort = "newest"
        q = (query.get("q") or "").strip()
        if len(q) > SEARCH_MAX_CHARS:
            errors.append(f"q: search is limited to {SEARCH_MAX_CHARS} characters")
            q = q[:SEARCH_MAX_CHARS]
        if "\x00" in q:
            errors.append("q: search must not contain NUL characters")
            q = q.replace("\x00", "")
        texts = {}
        for name in ("queue", "endpoint", "team"):
            value = (query.get(name) or "").strip()
            if _CONTROL.search(value):
                errors.append(f"{name}: must not contain control characters; not filtering by it")
                value = ""
            texts[name] = value
        kind = (query.get("kind") or "").strip()
        if _CONTROL.search(kind) or len(kind) > KIND_MAX_CHARS:
            errors.append(
                f"kind: must be at most {KIND_MAX_CHARS} characters, without control characters; not filtering by it"
            )
            kind = ""
        priority = None
        raw_priority = (query.get("priority") or "").strip()
        if raw_priority:
            try:
                priority = parse_priority(raw_priority)
            except ValueError as exc:
                errors.append(f"priority: {exc}; not filtering by it")
        days: dict[str, date | None] = {}
        for first, last in DAY_RANGES.values():
            for name in (first, last):
                raw_day = (query.get(name) or "").strip()
                days[name] = None
                if raw_day:
                    try:
                        days[name] = parse_day(raw_day)
                    except ValueError as exc:
                        errors.append(f"{name}: {exc}; not filtering by it")
            start, end = days[first], days[last]
            if start is not None and end is not None and start > end:
                errors.append(f"{first}: {start} is after {last} {end}; not filtering by these days")
                days[first] = days[last] = None
        failed_with = (query.get("failed_with") or "").strip()
        if "\x00" in failed_with or len(failed_with) > REASON_MAX_CHARS:
            errors.append(
                f"failed_with: must be a failure reason of at most {REASON_MAX_CHARS} characters; not filtering by it"
            )
            failed_with = ""
        cursors = {}
        for name in PAGE_PARAMS:
            raw = query.get(name)
            if raw:
                try:
                    cursors[name] = Cursor.decode(raw, with_priority=sort == "priority")
                except BadCursor:
                    errors.append(f"{name}: not a page cursor for this order; showing the first page")
        if len(cursors) == 2:
            cursors.pop("before")
        return cls(
            state=state,
            queue=texts["queue"][:128],
            endpoint=texts["endpoint"][:64],
            team=texts["team"][:64],
            mine=query.get("mine") in ("1", "on", "true"),
            q=q,
            kind=kind,
            priority=priority,
            created_from=days["created_from"],
            created_to=days["created_to"],
            finished_from=days["finished_from"],
            finished_to=days["finished_to"],
            failed_with=failed_with,
            sort=sort,
            after=cursors.get("after"),
            before=cursors.get("before"),
            errors=tuple(errors),
            zone=zone,
        )

    # --- writing the filter back into URLs ---------------------------------------------------

    def params(self, **overrides) -> dict[str, str]:
        """The non-default filter params (no page cursor unless given in ``overrides``)."""
        values = {
            "state": self.state if self.state != "all" else "",
            "queue": self.queue,
            "endpoint": self.endpoint,
            "team": self.team,
            "mine": "1" if self.mine else "",
            "q": self.q,
            "kind": self.kind,
            "priority": str(self.priority) if self.priority else "",
            "created_from": _day(self.created_from),
            "created_to": _day(self.created_to),
            "finished_from": _day(self.finished_from),
            "finished_to": _day(self.finished_to),
            "failed_with": self.failed_with,
            "sort": self.sort if self.sort != "newest" else "",
        }
        for key, value in overrides.items():
            values[key] = "" if value is None else str(value)
        order = FILTER_PARAMS + PAGE_PARAMS + tuple(k for k in values if k not in FILTER_PARAMS + PAGE_PARAMS)
        return {k: values[k] for k in order if values.get(k)}

    def query(self, **overrides) -> str:
        return urlencode(self.params(**overrides))

    @property
    def page_query(self) -> str:
        """The querystring of exactly this page (filter and cursor)."""
        return self.query(
            after=self.after.encode() if self.after else None,
            before=self.before.encode() if self.before else None,
        )

    def first_page(self) -> TodoFilter:
        return dataclasses.replace(self, after=None, before=None)

    @property
    def payload_match(self) -> PayloadMatch | None:
        return parse_payload_match(self.q) if self.q else None

    @property
    def is_paged(self) -> bool:
        return self.after is not None or self.before is not None

    @property
    def narrowed(self) -> bool:
        """Filters other than the state (counts are exact only without a search)."""
        return bool(self.queue or self.endpoint or self.team or self.mine or self.q or self.row_filtered)

    @property
    def row_filtered(self) -> bool:
        """Filters on a todo's own columns (kind, priority, days, failure reason): the relay's
        per-state counts cannot answer them, so the tabs count rows instead."""
        return bool(
            self.kind
            or self.priority
            or self.failed_with
            or any(getattr(self, name) for pair in DAY_RANGES.values() for name in pair)
        )

    def day_bounds(self, column: str) -> tuple[datetime | None, datetime | None]:
        """A day range as instants: from the first day's midnight (included) to the midnight
        after the last day (excluded), both in the filter's zone."""
        first, last = DAY_RANGES[column]
        start, end = getattr(self, first), getattr(self, last)
        return (
            datetime.combine(start, time(), self.zone) if start else None,
            datetime.combine(end + timedelta(days=1), time(), self.zone) if end else None,
        )


def _day(value: date | None) -> str:
    return value.isoformat() if value else ""

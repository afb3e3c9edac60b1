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
from datetime import UTC, datetime
from urllib.parse import urlencode

from todos.core.errors import Invalid
from todos.core.store import inputs
from todos.core.store.inputs import PRIORITY_RANGE

# URL value → label. "retry" and "dead" split the store's ``failed`` state (docs/lifecycle.md,
# "Derived states"); "scheduled" is the pending work that waits for its time (``next_retry_at``).
BOARD_STATES = {
    "all": "All",
    "pending": "Pending",
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
FILTER_PARAMS = ("state", "queue", "endpoint", "team", "mine", "q", "sort")
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
class TodoFilter:
    state: str = "all"
    queue: str = ""
    endpoint: str = ""  # slug
    team: str = ""  # slug
    mine: bool = False
    q: str = ""
    sort: str = "newest"
    after: Cursor | None = None
    before: Cursor | None = None
    errors: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_query(cls, query) -> TodoFilter:
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
            sort=sort,
            after=cursors.get("after"),
            before=cursors.get("before"),
            errors=tuple(errors),
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
        return bool(self.queue or self.endpoint or self.team or self.mine or self.q)

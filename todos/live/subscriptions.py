"""What the browser says it shows, and whether a team's change concerns it.

The page sends ``{"subscribe": {"page": "todos", "filter": "<querystring>", "todo": "<id>|null",
"related": [<id>, …]}}`` on connect, when its filter changes and when the drawer opens, closes or
changes (``related``: the open drawer's parents and children, whose states its graph shows). The server uses it only to
skip changes the page cannot show (fewer wake-ups, fewer fragment fetches); it is never a
permission: what a consumer may receive at all is decided by its team groups, and every fragment
the page then fetches is an ordinary authorised request.

Unknown pages and filter values the server cannot interpret let everything through: a wasted
fetch is cheap, a missed update is a bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs
from uuid import UUID

from todos.core.words import ChangeOp
from todos.live.messages import RECOUNT

TODO_OPS = frozenset(
    {
        ChangeOp.CREATE,
        ChangeOp.CLAIM,
        ChangeOp.HEARTBEAT,
        ChangeOp.COMPLETE,
        ChangeOp.FAIL,
        ChangeOp.RELEASE,
        ChangeOp.FORCE_RELEASE,
        ChangeOp.RETRY,
        ChangeOp.CANCEL,
        ChangeOp.ASSIGN,
        ChangeOp.PRIORITY,
        ChangeOp.RUN_NOW,
        ChangeOp.RESCHEDULE,
        ChangeOp.EDIT,
        ChangeOp.REAP,
        ChangeOp.TIMEOUT,
        ChangeOp.REQUEUE,
        ChangeOp.PURGE,
        ChangeOp.REVOKE,
    }
)

# A team's queue, concurrency-key, run-time-limit or rate-limit settings changed (no todo did).
QUEUE_OPS = frozenset({ChangeOp.PAUSE, ChangeOp.RESUME, ChangeOp.CONCURRENCY, ChangeOp.QUEUE_SETTING, ChangeOp.RATE})
# The relay rebuilt the counts (todos/live/relay.py): every number may have moved.
COUNT_OPS = frozenset({RECOUNT})
# What can make waiting work claimable or not (todos/core/selectors/claimability.py): an endpoint's
# scopes, vend or delete ("endpoint"), its revocation or expiry ("revoke"), a reservation ("assign").
CLAIMABILITY_OPS = frozenset({ChangeOp.ENDPOINT, ChangeOp.REVOKE, ChangeOp.ASSIGN})
# What a heartbeat, an assignment or a priority changes: who holds or may take a todo, and its
# order; no count, age or state.
UNCOUNTED_OPS = frozenset({ChangeOp.HEARTBEAT, ChangeOp.ASSIGN, ChangeOp.PRIORITY})

# The ops that can change what each page shows besides the open todo. Pages not listed get every
# op. A change of the human's *own* membership is not listed: it makes the consumer resync the page.
PAGE_OPS: dict[str, frozenset[str]] = {
    # Per-queue counts, ages and pauses; a heartbeat, an assignment or a priority changes none.
    # Work no agent can claim is flagged there too.
    "overview": (TODO_OPS - UNCOUNTED_OPS) | QUEUE_OPS | COUNT_OPS | CLAIMABILITY_OPS,
    "todos": TODO_OPS | QUEUE_OPS | COUNT_OPS | CLAIMABILITY_OPS,
    # A todo's own page: only its id matters (matched before this table is consulted).
    "drawer": frozenset(),
    # The audit trail: every human action; heartbeats are not actions.
    "activity": (TODO_OPS - {ChangeOp.HEARTBEAT})
    | QUEUE_OPS
    | {ChangeOp.ENDPOINT, ChangeOp.MEMBERSHIP, ChangeOp.SCHEDULE},
    "teams": frozenset({ChangeOp.MEMBERSHIP, ChangeOp.ENDPOINT}),
    # Finished, failed and lapsed attempts and first claims (todo_flow, kept by the relay).
    "charts": frozenset(
        {
            ChangeOp.CLAIM,
            ChangeOp.COMPLETE,
            ChangeOp.FAIL,
            ChangeOp.RELEASE,
            ChangeOp.FORCE_RELEASE,
            ChangeOp.CANCEL,
            ChangeOp.REAP,
            ChangeOp.TIMEOUT,
            ChangeOp.REVOKE,
        }
    )
    | COUNT_OPS,
    # In-flight todos, last heartbeats, recent outcomes per endpoint, and when each was last seen.
    "agents": TODO_OPS | QUEUE_OPS | {ChangeOp.ENDPOINT, ChangeOp.SEEN},
    # Schedules: one created, edited, paused, resumed or deleted ("schedule"), a tick fired
    # ("create"), a fired todo's state in "last fires", an owner endpoint revoked.
    "schedules": (TODO_OPS - UNCOUNTED_OPS) | {ChangeOp.SCHEDULE, ChangeOp.ENDPOINT},
    # The endpoints list: vend, rotate, scopes, lease, delete ("endpoint"), revoke and expiry
    # ("revoke"), and the once-a-minute "last seen" stamp ("seen").
    "endpoints": frozenset({ChangeOp.ENDPOINT, ChangeOp.REVOKE, ChangeOp.SEEN}),
}

MAX_FILTER = 2000
MAX_ID = 64
# The open drawer's parents and children (todos.core.selectors.drawer.RELATIVES_SHOWN each).
MAX_RELATED = 200


class InvalidSubscription(ValueError):
    pass


def _uuids(values: list[str]) -> frozenset[str] | None:
    """Filter values as canonical UUID strings; None (no constraint) if any is not a UUID (a slug,
    say), because then the server cannot tell what matches."""
    try:
        return frozenset(str(UUID(v)) for v in values)
    except ValueError:
        return None


@dataclass(frozen=True)
class Subscription:
    page: str = ""
    todo: str | None = None
    related: frozenset[str] = frozenset()
    teams: frozenset[str] | None = None
    queues: frozenset[str] | None = None
    endpoints: frozenset[str] | None = None

    @classmethod
    def parse(cls, raw) -> Subscription:
        if not isinstance(raw, dict):
            raise InvalidSubscription("subscribe must be an object")
        page, filter_, todo = raw.get("page"), raw.get("filter") or "", raw.get("todo")
        if not isinstance(page, str) or not 0 < len(page) <= 32:
            raise InvalidSubscription("page must be a short string")
        if not isinstance(filter_, str) or len(filter_) > MAX_FILTER:
            raise InvalidSubscription(f"filter must be a query string of at most {MAX_FILTER} characters")
        if todo is not None and (
            not isinstance(todo, (str, int)) or isinstance(todo, bool) or not 0 < len(str(todo)) <= MAX_ID
        ):
            raise InvalidSubscription("todo must be a todo id or null")
        related = raw.get("related") or []
        if (
            not isinstance(related, list)
            or len(related) > MAX_RELATED
            or not all(isinstance(r, str) and 0 < len(r) <= MAX_ID for r in related)
        ):
            raise InvalidSubscription(f"related must be a list of at most {MAX_RELATED} todo ids")
        teams = queues = endpoints = None
        if page == "todos":
            query = parse_qs(filter_.lstrip("?"), keep_blank_values=False)
            teams = _uuids(query["team"]) if "team" in query else None
            queues = frozenset(query["queue"]) if "queue" in query else None
            endpoints = _uuids(query["endpoint"]) if "endpoint" in query else None
        return cls(
            page=page,
            todo=None if todo is None else str(todo),
            related=frozenset(related),
            teams=teams,
            queues=queues,
            endpoints=endpoints,
        )

    def wants(self, event: dict) -> bool:
        """Whether a team's (merged) change may alter what this page shows."""
        if self.todo is not None and self.todo in (str(i) for i in event.get("ids", ())):
            return True
        if self.related and not self.related.isdisjoint(str(i) for i in event.get("ids", ())):
            return True  # a parent or child in the open drawer's dependency graph
        wanted = PAGE_OPS.get(self.page)
        if wanted is not None and not wanted.intersection(event.get("ops", ())):
            return False
        if self.teams is not None and event.get("team") not in self.teams:
            return False
        if self.queues is not None and event.get("queues") and not self.queues.intersection(event["queues"]):
            return False
        if (
            self.endpoints is not None
            and event.get("endpoints")
            and not self.endpoints.intersection(str(e) for e in event["endpoints"])
        ):
            return False
        return True

    def shown_ids(self, event: dict) -> list:
        """The event's ids this page can show. A todo's own page (the drawer opened alone) shows one
        todo and its relatives, so a change merged with others' (one relay pass, one fan-out window)
        reaches it as theirs only; every other page gets all the ids."""
        ids = list(event.get("ids", ()))
        if self.page == "drawer" and self.todo is not None:
            return [i for i in ids if str(i) == self.todo or str(i) in self.related]
        return ids

"""What an endpoint's credential can read: its own identity, its todos, one todo with its attempts.

Every todo read is scoped by ``endpoint_id`` AND ``queue = ANY(scope_queues)``: a foreign
tenant's todo, or one in a queue outside the caller's scope, is simply not there. The agent API
(``todos/agents/api``) is the caller; these are SELECTs only, the store owns every write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.db import Statement
from todos.core.errors import Forbidden, Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.records import ATTEMPT_COLUMNS, TODO_COLUMNS, Attempt, Todo
from todos.core.store.scopes import AgentScope

LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 200
ATTEMPTS_LIMIT_DEFAULT = 20
ATTEMPTS_LIMIT_MAX = 50

# --- credentials ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """The endpoint a bearer token belongs to, as of this request."""

    endpoint_id: UUID
    team_id: UUID
    slug: str
    scope_verbs: tuple[str, ...]
    scope_queues: tuple[str, ...]
    default_lease_ttl_seconds: int | None
    revoked: bool
    expired: bool
    capabilities: tuple[str, ...] = ()  # default capabilities of the endpoint's claims
    # Durations as of the read, by the database's clock, so that a cached copy can tell them apart
    # later by the process's own monotonic clock (todos/core/credential_cache.py) without trusting
    # the two clocks to agree: seconds the token had left (None: it never expires), and seconds
    # until ``last_seen_at`` is a minute old (0 or less: a stamp is due; never stamped: 0).
    expires_in: float | None = None
    stamp_in: float = 0.0

    @property
    def usable(self) -> bool:
        return not self.revoked and not self.expired

    @property
    def needs_touch(self) -> bool:
        """``last_seen_at`` is over a minute old (or never stamped) as of the read."""
        return self.stamp_in <= 0

    def agent(self, *, session: str | None = None) -> AgentScope:
        return AgentScope(
            endpoint_id=self.endpoint_id,
            team_id=self.team_id,
            queues=self.scope_queues,
            default_lease_ttl_seconds=self.default_lease_ttl_seconds,
            session=session,
            verbs=frozenset(self.scope_verbs),
            capabilities=self.capabilities,
            slug=self.slug,
        )


CREDENTIAL_COLUMNS: LiteralString = """id, team_id, slug, scope_verbs, scope_queues, default_lease_ttl_seconds,
       capabilities,
       state = 'revoked' AS revoked,
       coalesce(expires_at <= now(), false) AS expired,
       extract(epoch FROM expires_at - now())::float8 AS expires_in,
       coalesce(extract(epoch FROM last_seen_at + interval '1 minute' - now())::float8, 0) AS stamp_in"""


def _credential(row: dict) -> Credential:
    return Credential(
        endpoint_id=row["id"],
        team_id=row["team_id"],
        slug=row["slug"],
        scope_verbs=tuple(row["scope_verbs"]),
        scope_queues=tuple(row["scope_queues"]),
        default_lease_ttl_seconds=row["default_lease_ttl_seconds"],
        revoked=row["revoked"],
        expired=row["expired"],
        capabilities=tuple(row["capabilities"]),
        expires_in=row["expires_in"],
        stamp_in=row["stamp_in"],
    )


def credential_for(token_digest: bytes) -> Statement[Credential | None]:
    """The endpoint whose ``credential_hash`` is ``token_digest`` (revoked and expired included,
    so the caller can say which). The match is an index lookup on the digest, in SQL: no token
    or hash is compared in Python."""
    sql = f"SELECT {CREDENTIAL_COLUMNS}\nFROM endpoints WHERE credential_hash = %(digest)s"
    return Statement(sql, {"digest": token_digest}, lambda rows: _credential(rows[0]) if rows else None)


def team_endpoint(team_id: UUID, slug: Any, field: str = "endpoint") -> Statement[Credential]:
    """A usable endpoint of ``team_id`` by slug: the target of a ``create_for`` hand-off.

    Another team's endpoint, a revoked or an expired one, is *not found*, the same as none.
    """
    value = inputs.require_str(field, slug)
    sql = f"""SELECT {CREDENTIAL_COLUMNS} FROM endpoints
              WHERE team_id = %(team_id)s AND slug = %(slug)s AND state = 'active'
                AND (expires_at IS NULL OR expires_at > now())"""

    def finish(rows: list[dict]) -> Credential:
        if not rows:
            raise NotFound(f"no endpoint {value[:63]!r} in this team")
        return _credential(rows[0])

    return Statement(sql, {"team_id": team_id, "slug": value}, finish)


# --- list_todos -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentTodoPage:
    todos: tuple[Todo, ...]
    next_cursor: str | None


# ``<microseconds since the epoch>.<todo id>``: every string of this shape is a keyset position
# (so the OpenAPI document can state the whole rule as a pattern, and any cursor that fits it is
# answered with a page, possibly empty); 16 digits reach the year 2286.
CURSOR_PATTERN = r"^[0-9]{1,16}\.[A-Za-z0-9_-]{1,64}$"
_CURSOR_RE = re.compile(CURSOR_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def encode_cursor(todo: Todo) -> str:
    """A keyset position: the last row's ``(created_at, id)`` at full (microsecond) precision,
    so rows created in the same millisecond are neither skipped nor repeated."""
    return f"{(todo.created_at - _EPOCH) // _MICROSECOND}.{todo.id}"


def decode_cursor(value: Any) -> tuple[datetime, str]:
    value = inputs.require_str("cursor", value)
    if not _CURSOR_RE.fullmatch(value):
        raise Invalid("cursor", "is not a cursor this server handed out (pass next_cursor back as it came)")
    micros, todo_id = value.split(".", 1)
    return _EPOCH + int(micros) * _MICROSECOND, todo_id


def list_todos(
    agent: AgentScope,
    *,
    queue: Any = None,
    state: Any = None,
    dead_letter: Any = None,
    limit: Any = None,
    cursor: Any = None,
) -> Statement[AgentTodoPage]:
    """The caller's todos, newest first, ``limit`` at a time (default 50, at most 200).

    ``queue`` narrows to one queue of the caller's scope (another queue is *forbidden*);
    ``state`` is one of the five states; ``dead_letter`` true keeps dead letters only, false
    drops them. Paging is by keyset on ``(created_at, id)``: ``next_cursor`` is null on the
    last page.
    """
    conditions: list[LiteralString] = ["t.endpoint_id = %(endpoint_id)s", "t.queue = ANY(%(queues)s::text[])"]
    params: dict[str, Any] = {"endpoint_id": agent.endpoint_id, "queues": list(agent.queues)}
    if queue is not None:
        name = inputs.queue(queue)
        if name not in agent.queues:
            raise Forbidden(f"queue {name!r} is outside this endpoint's scope")
        params["queues"] = [name]
    if state is not None:
        params["state"] = inputs.state(state)
        conditions.append("t.state = %(state)s")
    if dead_letter is not None:
        if not isinstance(dead_letter, bool):
            raise Invalid("dead_letter", "must be a boolean")
        dead: LiteralString = "(t.state = 'failed' AND t.next_retry_at IS NULL)"
        conditions.append(dead if dead_letter else f"NOT {dead}")
    size = LIST_LIMIT_DEFAULT if limit is None else inputs.require_int("limit", limit, 1, LIST_LIMIT_MAX)
    if cursor is not None:
        params["after_created"], params["after_id"] = decode_cursor(cursor)
        conditions.append("(t.created_at, t.id) < (%(after_created)s, %(after_id)s)")
    params["fetch"] = size + 1
    sql = f"""SELECT {TODO_COLUMNS} FROM todos t
              WHERE {compose.conjunction(conditions, indent="                ")}
              ORDER BY t.created_at DESC, t.id DESC
              LIMIT %(fetch)s"""

    def finish(rows: list[dict]) -> AgentTodoPage:
        todos = tuple(Todo.from_row(row) for row in rows[:size])
        more = len(rows) > size
        return AgentTodoPage(todos=todos, next_cursor=encode_cursor(todos[-1]) if more else None)

    return Statement(sql, params, finish)


# --- get_todo ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentTodoDetail:
    todo: Todo
    attempts: tuple[Attempt, ...]  # newest first, the open one included
    after: tuple[str, ...] = ()  # its parents' ids (docs/lifecycle.md, "Dependencies"), sorted


def get_todo(agent: AgentScope, todo_id: Any, *, attempts_limit: Any = None) -> Statement[AgentTodoDetail]:
    """One todo with its newest ``attempts_limit`` attempts (default 20, at most 50).

    A todo in a queue outside the caller's scope is *not found* (not forbidden): reading must not
    reveal what exists beyond the scope.
    """
    limit = (
        ATTEMPTS_LIMIT_DEFAULT
        if attempts_limit is None
        else inputs.require_int("attempts_limit", attempts_limit, 1, ATTEMPTS_LIMIT_MAX)
    )
    params = {
        "id": inputs.todo_id(todo_id),
        "endpoint_id": agent.endpoint_id,
        "queues": list(agent.queues),
        "limit": limit,
    }
    sql = f"""
SELECT {TODO_COLUMNS},
       (SELECT coalesce(json_agg(a ORDER BY a.seq DESC), '[]'::json) FROM (
            SELECT {ATTEMPT_COLUMNS}
            FROM todo_attempts a
            WHERE a.todo_id = t.id ORDER BY a.seq DESC LIMIT %(limit)s) a) AS attempts,
       -- its parents, done or not
       ARRAY(SELECT d.parent_id FROM todo_dependencies d WHERE d.child_id = t.id ORDER BY d.parent_id) AS after
FROM todos t
WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])"""

    def finish(rows: list[dict]) -> AgentTodoDetail:
        if not rows:
            raise NotFound(f"no such todo: {params['id']}")
        row = rows[0]
        return AgentTodoDetail(
            todo=Todo.from_row(row),
            attempts=tuple(Attempt.from_row(a) for a in row["attempts"]),
            after=tuple(row["after"]),
        )

    return Statement(sql, params, finish)

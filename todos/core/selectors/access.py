"""Who is looking: the signed-in human's teams, roles and endpoints, read once per request.

``operatorOwns(human)`` is "a member of the team that owns the todo's endpoint". The Board resolves
it once into a :class:`Viewer` (one query), and every selector filters todos by
``endpoint_id = ANY(viewer.endpoint_ids)``: a primary-key-prefixed predicate the list indexes
serve directly. Superusers get no extra endpoints: they manage teams, not other teams' work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import LiteralString
from uuid import UUID

from todos.core.db import pool

ACTING_ROLES = ("operator", "admin")


@dataclass(frozen=True)
class TeamAccess:
    id: UUID
    slug: str
    name: str
    role: str

    @property
    def can_act(self) -> bool:
        return self.role in ACTING_ROLES

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


@dataclass(frozen=True)
class EndpointRef:
    """What the Board may show of an endpoint: never its credential hash."""

    id: UUID
    team_id: UUID
    slug: str
    name: str
    state: str
    scope_queues: tuple[str, ...]
    capabilities: tuple[str, ...] = ()  # default capabilities of its claims


@dataclass(frozen=True)
class Viewer:
    user_id: int
    username: str
    is_superuser: bool
    teams: tuple[TeamAccess, ...]
    endpoints: tuple[EndpointRef, ...]
    _teams_by_id: dict = field(default_factory=dict, repr=False, compare=False)
    _endpoints_by_id: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        self._teams_by_id.update({t.id: t for t in self.teams})
        self._endpoints_by_id.update({e.id: e for e in self.endpoints})

    @property
    def endpoint_ids(self) -> list[UUID]:
        return [e.id for e in self.endpoints]

    @property
    def team_ids(self) -> list[UUID]:
        return [t.id for t in self.teams]

    @property
    def owner(self) -> str:
        return f"human:{self.user_id}"

    @property
    def can_act_anywhere(self) -> bool:
        return any(t.can_act for t in self.teams)

    @property
    def is_admin_anywhere(self) -> bool:
        return any(t.is_admin for t in self.teams)

    def team(self, team_id) -> TeamAccess | None:
        return self._teams_by_id.get(_uuid(team_id))

    def team_by_slug(self, slug: str) -> TeamAccess | None:
        return next((t for t in self.teams if t.slug == slug), None)

    def endpoint(self, endpoint_id) -> EndpointRef | None:
        return self._endpoints_by_id.get(_uuid(endpoint_id))

    def endpoint_by_slug(self, slug: str) -> EndpointRef | None:
        return next((e for e in self.endpoints if e.slug == slug), None)

    def team_of_endpoint(self, endpoint_id) -> TeamAccess | None:
        endpoint = self.endpoint(endpoint_id)
        return self.team(endpoint.team_id) if endpoint else None

    def can_act_on(self, endpoint_id) -> bool:
        """Operators and admins act on their team's todos; viewers only look."""
        team = self.team_of_endpoint(endpoint_id)
        return bool(team and team.can_act)

    def acting_endpoints(self) -> list[EndpointRef]:
        return [e for e in self.endpoints if self.can_act_on(e.id)]


def _uuid(value) -> UUID | None:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except (TypeError, ValueError):
        return None


VIEWER_SQL: LiteralString = """
SELECT tm.role, tm.team_id, tt.slug AS team_slug, tt.name AS team_name,
       e.id AS endpoint_id, e.slug, e.name, e.state, e.scope_queues, e.capabilities
FROM team_members tm
JOIN teams tt ON tt.id = tm.team_id
LEFT JOIN endpoints e ON e.team_id = tm.team_id
WHERE tm.user_id = %(user_id)s
ORDER BY tt.name, tt.slug, e.name, e.slug
"""


def viewer_for(user) -> Viewer:
    """The human's memberships and their teams' endpoints, in one query.

    Cached on the user object for the rest of the request (a request-scoped value: the next
    request sees membership changes at once).
    """
    cached = getattr(user, "_board_viewer", None)
    if cached is not None:
        return cached
    with pool().connection() as conn:
        rows = conn.execute(VIEWER_SQL, {"user_id": user.pk}).fetchall()
    teams: dict[UUID, TeamAccess] = {}
    endpoints: list[EndpointRef] = []
    for row in rows:
        teams.setdefault(row["team_id"], TeamAccess(row["team_id"], row["team_slug"], row["team_name"], row["role"]))
        if row["endpoint_id"] is not None:
            endpoints.append(
                EndpointRef(
                    row["endpoint_id"],
                    row["team_id"],
                    row["slug"],
                    row["name"],
                    row["state"],
                    tuple(row["scope_queues"] or ()),
                    tuple(row["capabilities"] or ()),
                )
            )
    viewer = Viewer(
        user_id=user.pk,
        username=user.get_username(),
        is_superuser=bool(user.is_superuser),
        teams=tuple(teams.values()),
        endpoints=tuple(endpoints),
    )
    try:
        user._board_viewer = viewer
    except AttributeError:  # pragma: no cover - exotic user objects
        pass
    return viewer


def usernames(user_ids) -> dict[int, str]:
    """Display names for ``human:<id>`` owners and assignees (ids come from the viewer's own rows)."""
    ids = sorted({int(i) for i in user_ids if i is not None})
    if not ids:
        return {}
    with pool().connection() as conn:
        rows = conn.execute("SELECT id, username FROM auth_user WHERE id = ANY(%s)", (ids,)).fetchall()
    return {row["id"]: row["username"] for row in rows}

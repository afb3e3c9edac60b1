"""Teams, members and the read-only endpoint list of the Teams screens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from todos.core.replica import read_connection
from todos.core.selectors.access import TeamAccess, Viewer


@dataclass(frozen=True)
class TeamSummary:
    id: UUID
    slug: str
    name: str
    created_at: datetime
    members: int
    endpoints: int
    role: str | None  # the viewer's role; None for a superuser who is not a member


@dataclass(frozen=True)
class Member:
    user_id: int
    username: str
    role: str
    since: datetime


@dataclass(frozen=True)
class EndpointListing:
    id: UUID
    slug: str
    name: str
    state: str
    scope_verbs: tuple[str, ...]
    scope_queues: tuple[str, ...]
    default_lease_ttl_seconds: int | None
    expires_at: datetime | None
    last_seen_at: datetime | None
    credential_prefix: str
    created_by: str | None
    created_at: datetime


def visible_teams(viewer: Viewer) -> list[TeamSummary]:
    """The viewer's teams; a site admin (superuser) sees every team, to manage memberships."""
    where = "TRUE" if viewer.is_superuser else "t.id = ANY(%(teams)s::uuid[])"
    sql = f"""
SELECT t.id, t.slug, t.name, t.created_at,
       (SELECT count(*) FROM team_members m WHERE m.team_id = t.id) AS members,
       (SELECT count(*) FROM endpoints e WHERE e.team_id = t.id) AS endpoints,
       (SELECT role FROM team_members m WHERE m.team_id = t.id AND m.user_id = %(user_id)s) AS role
FROM teams t WHERE {where} ORDER BY t.name, t.slug"""
    with read_connection() as conn:
        rows = conn.execute(sql, {"teams": viewer.team_ids, "user_id": viewer.user_id}).fetchall()
    return [TeamSummary(**row) for row in rows]


def team_for(viewer: Viewer, slug: str) -> TeamAccess | None:
    """A team the viewer may open: a member's team, or any team for a site admin."""
    team = viewer.team_by_slug(slug)
    if team is not None:
        return team
    if not viewer.is_superuser:
        return None
    with read_connection() as conn:
        row = conn.execute("SELECT id, slug, name FROM teams WHERE slug = %s", (slug,)).fetchone()
    return TeamAccess(row["id"], row["slug"], row["name"], "site-admin") if row else None


def members(team_id: UUID) -> list[Member]:
    """A team's members. Callers pass a team from :func:`team_for` or the viewer's own teams."""
    sql = """SELECT m.user_id, u.username, m.role, m.created_at AS since
FROM team_members m JOIN auth_user u ON u.id = m.user_id
WHERE m.team_id = %s ORDER BY u.username"""
    with read_connection() as conn:
        return [Member(**row) for row in conn.execute(sql, (team_id,)).fetchall()]


def endpoints(team_id: UUID) -> list[EndpointListing]:
    sql = """SELECT e.id, e.slug, e.name, e.state, e.scope_verbs, e.scope_queues, e.default_lease_ttl_seconds,
       e.expires_at, e.last_seen_at, e.credential_prefix, u.username AS created_by, e.created_at
FROM endpoints e LEFT JOIN auth_user u ON u.id = e.created_by
WHERE e.team_id = %s ORDER BY e.name, e.slug"""
    with read_connection() as conn:
        rows = conn.execute(sql, (team_id,)).fetchall()
    return [
        EndpointListing(**{**row, "scope_verbs": tuple(row["scope_verbs"]), "scope_queues": tuple(row["scope_queues"])})
        for row in rows
    ]


def user_id_by_username(username: str) -> int | None:
    with read_connection() as conn:
        row = conn.execute("SELECT id FROM auth_user WHERE username = %s AND is_active", (username,)).fetchone()
    return row["id"] if row else None

"""Reads for the Endpoints screen: the viewer's teams' endpoints, one endpoint, a team's known
queues, and the live work an action would strand or dead-letter.

Every read is scoped to the viewer's memberships in its SQL (``team_id = ANY(viewer.team_ids)``):
another team's endpoint is not found, exactly like one that does not exist. Nothing here reads a
credential hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from todos.core.db import single_row
from todos.core.replica import read_connection
from todos.core.selectors.access import TeamAccess, Viewer

ENDPOINT_SQL: LiteralString = """
SELECT e.id, e.team_id, e.slug, e.name, e.state, e.scope_verbs, e.scope_queues, e.default_lease_ttl_seconds,
       e.expires_at, e.revoked_at, e.last_seen_at, e.credential_prefix, e.created_at, u.username AS created_by,
       e.capabilities, e.claims_paused_at, e.claims_paused_by
FROM endpoints e LEFT JOIN auth_user u ON u.id = e.created_by"""

# Distinct queues of a team's todos without reading its todos: a skip scan over
# todos_endpoint_queue_state_created (one index probe per endpoint and queue), at most
# KNOWN_QUEUES_MAX steps per endpoint.
KNOWN_QUEUES_MAX = 200
KNOWN_QUEUES_SQL: LiteralString = """
WITH RECURSIVE seen AS (
    SELECT e.id AS endpoint_id, (SELECT min(t.queue) FROM todos t WHERE t.endpoint_id = e.id) AS queue, 1 AS n
    FROM endpoints e WHERE e.team_id = %(team_id)s
    UNION ALL
    SELECT s.endpoint_id,
           (SELECT min(t.queue) FROM todos t WHERE t.endpoint_id = s.endpoint_id AND t.queue > s.queue),
           s.n + 1
    FROM seen s WHERE s.queue IS NOT NULL AND s.n < %(max)s
)
SELECT queue FROM seen WHERE queue IS NOT NULL
UNION
SELECT unnest(e.scope_queues) FROM endpoints e WHERE e.team_id = %(team_id)s
ORDER BY 1 LIMIT %(max)s"""

# Live work (what revoking dead-letters, what narrowing a scope leaves behind), per queue and
# state, each from its partial index: pending (todos_pending), claimed (todos_claimed), waiting
# for a retry (todos_retry_due, a small set).
LIVE_SQL: LiteralString = """
SELECT 'pending' AS state, t.queue, count(*) AS n FROM todos t
WHERE t.endpoint_id = %(endpoint_id)s AND t.state = 'pending' GROUP BY t.queue
UNION ALL
SELECT 'claimed', t.queue, count(*) FROM todos t
WHERE t.endpoint_id = %(endpoint_id)s AND t.state = 'claimed' GROUP BY t.queue
UNION ALL
SELECT 'retry', t.queue, count(*) FROM todos t
WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.endpoint_id = %(endpoint_id)s GROUP BY t.queue"""

TOTAL_CAP = 10_000


@dataclass(frozen=True)
class EndpointRow:
    id: UUID
    team_id: UUID
    slug: str
    name: str
    state: str
    scope_verbs: tuple[str, ...]
    scope_queues: tuple[str, ...]
    default_lease_ttl_seconds: int | None
    expires_at: datetime | None
    revoked_at: datetime | None
    last_seen_at: datetime | None
    credential_prefix: str
    created_at: datetime
    created_by: str | None
    capabilities: tuple[str, ...] = ()  # what its claims present when they present none
    # set while a team admin has paused its claims (the Agents page): claims are refused, reports land
    claims_paused_at: datetime | None = None
    claims_paused_by: str | None = None

    @property
    def active(self) -> bool:
        return self.state == "active"

    @classmethod
    def from_row(cls, row: dict) -> EndpointRow:
        return cls(
            **{
                **row,
                "scope_verbs": tuple(row["scope_verbs"]),
                "scope_queues": tuple(row["scope_queues"]),
                "capabilities": tuple(row["capabilities"] or ()),
            }
        )


@dataclass(frozen=True)
class TeamEndpoints:
    team: TeamAccess
    manages: bool
    endpoints: list[EndpointRow] = field(default_factory=list)


@dataclass(frozen=True)
class LiveWork:
    """Live todos per queue and state (``pending``, ``claimed``, ``retry``)."""

    counts: dict[str, dict[str, int]]  # queue -> state -> n

    @property
    def total(self) -> int:
        return sum(n for states in self.counts.values() for n in states.values())

    def state(self, name: str) -> int:
        return sum(states.get(name, 0) for states in self.counts.values())

    @property
    def pending(self) -> int:
        return self.state("pending")

    @property
    def claimed(self) -> int:
        return self.state("claimed")

    @property
    def retry(self) -> int:
        return self.state("retry")

    def in_queues(self, queues) -> LiveWork:
        return LiveWork({q: s for q, s in self.counts.items() if q in set(queues)})

    def queue_total(self, queue: str) -> int:
        return sum(self.counts.get(queue, {}).values())


def manages(viewer: Viewer, team: TeamAccess) -> bool:
    """Whether the viewer may vend, edit, rotate, revoke and delete this team's endpoints: its
    admins, and its members who are site admins (the store checks the same in SQL)."""
    return team.is_admin or viewer.is_superuser


def by_team(viewer: Viewer) -> list[TeamEndpoints]:
    """Every team of the viewer with its endpoints (active first, then revoked; by name)."""
    with read_connection() as conn:
        rows = conn.execute(
            ENDPOINT_SQL
            + """ WHERE e.team_id = ANY(%(teams)s::uuid[])
            ORDER BY e.state = 'revoked', lower(e.name), e.slug""",
            {"teams": viewer.team_ids},
        ).fetchall()
    groups = {team.id: TeamEndpoints(team=team, manages=manages(viewer, team)) for team in viewer.teams}
    for row in rows:
        group = groups.get(row["team_id"])
        if group is not None:
            group.endpoints.append(EndpointRow.from_row(row))
    return list(groups.values())


def endpoint_for(viewer: Viewer, slug: str) -> EndpointRow | None:
    """An endpoint of one of the viewer's teams; ``None`` for an unknown or foreign slug alike."""
    with read_connection() as conn:
        row = conn.execute(
            ENDPOINT_SQL + "\nWHERE e.slug = %(slug)s AND e.team_id = ANY(%(teams)s::uuid[])",
            {"slug": slug, "teams": viewer.team_ids},
        ).fetchone()
    return EndpointRow.from_row(row) if row else None


def known_queues(team_id: UUID) -> list[str]:
    """Queues the team has used: its endpoints' scopes and its todos' queues, sorted."""
    with read_connection() as conn:
        rows = conn.execute(KNOWN_QUEUES_SQL, {"team_id": team_id, "max": KNOWN_QUEUES_MAX}).fetchall()
    return [row["queue"] for row in rows]


def live_work(endpoint_id: UUID) -> LiveWork:
    counts: dict[str, dict[str, int]] = {}
    with read_connection() as conn:
        for row in conn.execute(LIVE_SQL, {"endpoint_id": endpoint_id}).fetchall():
            counts.setdefault(row["queue"], {})[row["state"]] = row["n"]
    return LiveWork(counts)


def todo_total(endpoint_id: UUID, cap: int = TOTAL_CAP) -> tuple[int, bool]:
    """How many todos the endpoint owns, counted up to ``cap`` (``(cap, True)`` beyond it)."""
    with read_connection() as conn:
        n = single_row(
            conn.execute(
                "SELECT count(*) AS n FROM "
                "(SELECT 1 FROM todos t WHERE t.endpoint_id = %s ORDER BY t.created_at LIMIT %s) c",
                (endpoint_id, cap + 1),
            )
        )["n"]
    return min(n, cap), n > cap

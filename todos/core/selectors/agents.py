"""Agents at a glance: per endpoint, what it holds now, when it last spoke, how its recent
attempts ended (with its throughput and failure rate over the last hour), whether its claims are
paused. The first place to look when an agent is stuck.

In-flight work comes from ``todos_claimed``; recent outcomes from
``todo_attempts_endpoint_ended`` (0004), which indexes closed attempts by claiming endpoint and
end time (never a column a heartbeat writes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from todos.core.replica import read_connection
from todos.core.selectors.access import EndpointRef, Viewer
from todos.core.selectors.endpoints import manages

IN_FLIGHT_SHOWN = 5

IN_FLIGHT_SQL: LiteralString = """
SELECT t.endpoint_id, t.id, t.title, t.queue, t.lease_expires_at, t.claimed_at,
       (t.lease_expires_at < now()) AS lapsed, a.claimant, a.last_heartbeat_at
FROM todos t
LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total AND a.ended_at IS NULL
WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
  AND t.owner = 'endpoint:' || t.endpoint_id::text
ORDER BY t.claimed_at"""

OUTCOMES_SQL: LiteralString = """
SELECT e.id AS endpoint_id, o.outcome, o.n, o.last_ended
FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT a.outcome, count(*) AS n, max(a.ended_at) AS last_ended FROM todo_attempts a
    WHERE a.claimer_endpoint_id = e.id AND a.ended_at > now() - interval '1 hour'
    GROUP BY a.outcome
) o"""

SEEN_SQL: LiteralString = """SELECT id, last_seen_at, claims_paused_at, claims_paused_by
FROM endpoints WHERE id = ANY(%(eps)s::uuid[])"""

# The window of the outcome counts and the rates (OUTCOMES_SQL's interval).
WINDOW_MINUTES = 60


@dataclass
class InFlight:
    id: str
    title: str
    queue: str
    lease_expires_at: datetime
    lapsed: bool
    claimant: str | None


@dataclass
class AgentStatus:
    endpoint: EndpointRef
    team_name: str
    last_seen_at: datetime | None = None
    last_heartbeat_at: datetime | None = None
    in_flight: int = 0
    lapsed: int = 0
    examples: list[InFlight] = field(default_factory=list)
    completed: int = 0
    failed: int = 0
    died: int = 0
    released: int = 0
    claims_paused_at: datetime | None = None
    claims_paused_by: str | None = None
    manages: bool = False  # the viewer may pause, resume and revoke it (a team admin)

    @property
    def paused(self) -> bool:
        return self.claims_paused_at is not None

    @property
    def per_minute(self) -> float:
        """Todos completed per minute over the last hour."""
        return self.completed / WINDOW_MINUTES

    @property
    def finished(self) -> int:
        """Attempts that ended the work one way or another in the last hour: completed, failed,
        or died (lease lapsed or reaped). A release hands the work back and is not counted."""
        return self.completed + self.failed + self.died

    @property
    def failure_rate(self) -> float | None:
        """Failed and died among the finished attempts of the last hour; None when none finished."""
        return (self.failed + self.died) / self.finished if self.finished else None

    @property
    def seen_at(self) -> datetime | None:
        """When the endpoint last showed a sign of life: its last API request, or a heartbeat of
        a lease it holds (a heartbeat is the endpoint speaking, whichever way it reached the store),
        so "never" is never shown beside a recent heartbeat."""
        times = [t for t in (self.last_seen_at, self.last_heartbeat_at) if t is not None]
        return max(times) if times else None

    @property
    def stuck(self) -> bool:
        return self.lapsed > 0 or (self.died > 0 and self.completed == 0)


def agents(viewer: Viewer) -> list[AgentStatus]:
    eps = viewer.endpoint_ids
    if not eps:
        return []
    teams = {t.id: t for t in viewer.teams}  # every endpoint of the viewer's is on one of them
    statuses: dict[UUID, AgentStatus] = {
        e.id: AgentStatus(
            endpoint=e,
            team_name=teams[e.team_id].name,
            manages=manages(viewer, teams[e.team_id]) and e.state == "active",
        )
        for e in viewer.endpoints
    }
    with read_connection() as conn:
        in_flight = conn.execute(IN_FLIGHT_SQL, {"eps": eps}).fetchall()
        outcomes = conn.execute(OUTCOMES_SQL, {"eps": eps}).fetchall()
        seen = conn.execute(SEEN_SQL, {"eps": eps}).fetchall()
    for row in seen:
        s = statuses[row["id"]]
        s.last_seen_at = row["last_seen_at"]
        s.claims_paused_at, s.claims_paused_by = row["claims_paused_at"], row["claims_paused_by"]
    for row in in_flight:
        s = statuses[row["endpoint_id"]]
        s.in_flight += 1
        s.lapsed += bool(row["lapsed"])
        beat = row["last_heartbeat_at"] or row["claimed_at"]
        if beat and (s.last_heartbeat_at is None or beat > s.last_heartbeat_at):
            s.last_heartbeat_at = beat
        if len(s.examples) < IN_FLIGHT_SHOWN:
            s.examples.append(
                InFlight(row["id"], row["title"], row["queue"], row["lease_expires_at"], row["lapsed"], row["claimant"])
            )
    for row in outcomes:
        s = statuses[row["endpoint_id"]]
        outcome = row["outcome"]
        if outcome == "completed":
            s.completed += row["n"]
        elif outcome in ("failed", "timed_out"):  # a timeout is a failure: the holder was alive
            s.failed += row["n"]
        elif outcome in ("lease_expired", "reaped"):
            s.died += row["n"]
        elif outcome == "released":
            s.released += row["n"]
    return sorted(statuses.values(), key=lambda s: (s.team_name, s.endpoint.name))

"""Rate limits as the Board shows them: every limited key of the viewer's teams, throttled first.

A key is *throttled* while its ring's oldest claim is still inside the interval (``refills_at``
in the future, 0025): its pending todos wait, and claims skip them until ``refills_at``. One
statement over the viewer's teams; each key's waiting work is counted up to ``WAITING_CAP``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import TeamAccess, Viewer

SHOWN_LIMIT = 50
WAITING_CAP = 1000

LIMITS_SQL: LiteralString = f"""
SELECT r.team_id, r.key, r.allowance, r.per, r.refills_at, coalesce(r.refills_at > now(), false) AS throttled,
       w.waiting
FROM rate_limits r
CROSS JOIN LATERAL (
    SELECT count(*) AS waiting FROM (
        SELECT 1 FROM todos t JOIN endpoints e ON e.id = t.endpoint_id AND e.team_id = r.team_id
        WHERE t.rate_key = r.key AND t.state = 'pending' AND t.endpoint_id = ANY(%(eps)s::uuid[])
        LIMIT {compose.integer(WAITING_CAP + 1)}
    ) p
) w
WHERE r.team_id = ANY(%(teams)s::uuid[])
ORDER BY coalesce(r.refills_at > now(), false) AND w.waiting > 0 DESC, r.key
LIMIT {compose.integer(SHOWN_LIMIT)}"""

TEAM_LIMITS_SQL: LiteralString = """
SELECT r.team_id, r.key, r.allowance, r.per, r.refills_at, coalesce(r.refills_at > now(), false) AS throttled,
       0 AS waiting
FROM rate_limits r WHERE r.team_id = %(team)s ORDER BY r.key"""


@dataclass(frozen=True)
class KeyRate:
    team_id: UUID
    key: str
    allowance: int
    per: str
    refills_at: datetime | None  # when the next allowance comes (past or None: one is free now)
    throttled: bool
    waiting: int  # pending todos with the key, up to WAITING_CAP + 1

    @property
    def limit_text(self) -> str:
        return f"{self.allowance:,} per {self.per}"

    @property
    def waiting_shown(self) -> str:
        return f"{WAITING_CAP:,}+" if self.waiting > WAITING_CAP else f"{self.waiting:,}"

    @property
    def holding_work(self) -> bool:
        """Throttled with work waiting: what the Board calls out."""
        return self.throttled and self.waiting > 0


@dataclass(frozen=True)
class ShownRate:
    team: TeamAccess
    rate: KeyRate


def rate_limits(viewer: Viewer) -> list[ShownRate]:
    """The viewer's teams' limited keys, throttled ones with waiting work first (at most SHOWN_LIMIT)."""
    if not viewer.team_ids:
        return []
    with read_connection() as conn:
        rows = conn.execute(LIMITS_SQL, {"eps": viewer.endpoint_ids, "teams": viewer.team_ids}).fetchall()
    out = []
    for row in rows:
        team = viewer.team(row["team_id"])
        if team is not None:
            out.append(ShownRate(team, KeyRate(**row)))
    return out


def team_limits(team_id: UUID) -> list[KeyRate]:
    """Every limited key of a team (for ``manage.py ratelimit list``)."""
    with read_connection() as conn:
        rows = conn.execute(TEAM_LIMITS_SQL, {"team": team_id}).fetchall()
    return [KeyRate(**row) for row in rows]

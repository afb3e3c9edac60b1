"""Concurrency keys as the Board shows them: the keys at their limit, with what waits behind them.

A key is *at its limit* when its team's claimed todos with it (``concurrency_keys.claimed``, kept
by the claims and the slot trigger of 0011) reach ``max_claimed``: its pending todos wait, and
claims skip them. One statement over the viewer's teams; each key's waiting work is read through
``todos_concurrency_key`` and counted up to ``WAITING_CAP``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import TeamAccess, Viewer

BUSY_LIMIT = 20
WAITING_CAP = 1000
NEXT_SHOWN = 3

BUSY_SQL: LiteralString = f"""
SELECT k.team_id, k.key, k.claimed, k.max_claimed, w.waiting, w.next
FROM concurrency_keys k
CROSS JOIN LATERAL (
    SELECT count(*) AS waiting,
           coalesce(json_agg(json_build_object('id', p.id, 'title', p.title, 'queue', p.queue)
                             ORDER BY p.priority, p.created_at)
                    FILTER (WHERE p.n <= {compose.integer(NEXT_SHOWN)}), '[]'::json) AS next
    FROM (
        SELECT t.id, t.title, t.queue, t.priority, t.created_at,
               row_number() OVER (ORDER BY t.priority, t.created_at) AS n
        FROM todos t
        WHERE t.concurrency_key = k.key AND t.state = 'pending' AND t.endpoint_id = ANY(%(eps)s::uuid[])
        LIMIT {compose.integer(WAITING_CAP + 1)}
    ) p
) w
WHERE k.team_id = ANY(%(teams)s::uuid[]) AND k.claimed >= k.max_claimed
ORDER BY w.waiting DESC, k.key
LIMIT {compose.integer(BUSY_LIMIT)}"""

LIMITS_SQL: LiteralString = """
SELECT k.team_id, k.key, k.claimed, k.max_claimed FROM concurrency_keys k
WHERE k.team_id = %(team)s ORDER BY k.key"""


@dataclass(frozen=True)
class WaitingTodo:
    id: str
    title: str
    queue: str


@dataclass(frozen=True)
class BusyKey:
    team: TeamAccess
    key: str
    claimed: int
    max_claimed: int
    waiting: int  # pending todos with the key, up to WAITING_CAP + 1
    next: tuple[WaitingTodo, ...]  # the first NEXT_SHOWN of them in claim order

    @property
    def waiting_shown(self) -> str:
        return f"{WAITING_CAP:,}+" if self.waiting > WAITING_CAP else f"{self.waiting:,}"


def busy_keys(viewer: Viewer) -> list[BusyKey]:
    """The viewer's teams' keys at their limit, most waiting work first (at most BUSY_LIMIT)."""
    if not viewer.endpoint_ids:
        return []
    with read_connection() as conn:
        rows = conn.execute(BUSY_SQL, {"eps": viewer.endpoint_ids, "teams": viewer.team_ids}).fetchall()
    out = []
    for row in rows:
        team = viewer.team(row["team_id"])
        if team is None:
            continue
        waiting = tuple(WaitingTodo(n["id"], n["title"], n["queue"]) for n in row["next"])
        out.append(BusyKey(team, row["key"], row["claimed"], row["max_claimed"], row["waiting"], waiting))
    return out


@dataclass(frozen=True)
class KeyState:
    team_id: UUID
    key: str
    claimed: int
    max_claimed: int


def team_keys(team_id: UUID) -> list[KeyState]:
    """Every key a team has used or configured, with its limit and slots in use (for
    ``manage.py concurrency list``)."""
    with read_connection() as conn:
        rows = conn.execute(LIMITS_SQL, {"team": team_id}).fetchall()
    return [KeyState(**row) for row in rows]

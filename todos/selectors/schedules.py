"""Schedules as the Board and the shell show them: each with its team, owner endpoint and last fires.

A fire links to its todo and says how the todo ended (its Board state: pending, claimed, done,
dead…, or ``gone`` once retention purged it). Reads only the given teams' schedules: the Board
passes the viewer's teams, the shell one team.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.db import Statement
from todos.replica import read_connection
from todos.sql import compose

RECENT_FIRES = 5


def _schedules_sql(where: LiteralString) -> LiteralString:
    return f"""
SELECT s.*, tm.slug AS team_slug, tm.name AS team_name, e.slug AS endpoint_slug, e.state AS endpoint_state,
       coalesce((
           SELECT json_agg(json_build_object(
                      'tick', f.tick, 'how', f.how, 'missed', f.missed, 'fired_at', f.fired_at,
                      'todo_id', f.todo_id, 'state', todo_board_state(td.state, td.next_retry_at),
                      'title', td.title) ORDER BY f.fired_at DESC)
           FROM (SELECT * FROM schedule_fires sf WHERE sf.schedule_id = s.id
                 ORDER BY sf.fired_at DESC LIMIT {compose.integer(RECENT_FIRES)}) f
           LEFT JOIN todos td ON td.id = f.todo_id), '[]'::json) AS fires
FROM schedules s JOIN teams tm ON tm.id = s.team_id JOIN endpoints e ON e.id = s.endpoint_id
WHERE {where}
ORDER BY tm.name, s.name"""


SCHEDULES_SQL = _schedules_sql("s.team_id = ANY(%(teams)s::uuid[]) AND (%(id)s::uuid IS NULL OR s.id = %(id)s::uuid)")
# An agent's own schedules (the verb ``list_schedules``): those its endpoint owns, nothing else.
ENDPOINT_SCHEDULES_SQL = _schedules_sql("s.endpoint_id = %(endpoint_id)s")


@dataclass(frozen=True)
class FireView:
    tick: datetime
    how: str
    missed: int
    fired_at: datetime
    todo_id: str | None
    state: str  # the todo's Board state, or "gone" (purged, or never created)


@dataclass(frozen=True)
class ScheduleView:
    id: UUID
    team_id: UUID
    team_slug: str
    team_name: str
    name: str
    cron: str
    timezone: str
    endpoint_id: UUID
    endpoint_slug: str
    endpoint_state: str
    queue: str
    title: str
    kind: str | None
    payload: Any
    priority: int
    max_attempts: int
    missed: str
    requires: list[str]
    paused: bool
    next_fire_at: datetime
    fires: tuple[FireView, ...]


def _views(rows: list[dict]) -> list[ScheduleView]:
    names = ScheduleView.__dataclass_fields__
    return [
        ScheduleView(**{**{k: row[k] for k in names if k != "fires"}, "fires": tuple(_fire(d) for d in row["fires"])})
        for row in rows
    ]


def _fire(doc: dict) -> FireView:
    return FireView(
        tick=datetime.fromisoformat(doc["tick"]),
        how=doc["how"],
        missed=doc["missed"],
        fired_at=datetime.fromisoformat(doc["fired_at"]),
        todo_id=doc["todo_id"] if doc["state"] else None,
        state=doc["state"] or "gone",
    )


def schedules_of(team_ids: list[UUID], schedule_id: UUID | None = None) -> list[ScheduleView]:
    """The schedules of ``team_ids`` (one of them when ``schedule_id`` is given), by team and name."""
    if not team_ids:
        return []
    with read_connection() as conn:
        rows = conn.execute(SCHEDULES_SQL, {"teams": team_ids, "id": schedule_id}).fetchall()
    return _views(rows)


def endpoint_schedules(endpoint_id: UUID) -> Statement[list[ScheduleView]]:
    """The schedules an endpoint owns, by name: what the agent verb ``list_schedules`` answers."""
    return Statement(ENDPOINT_SCHEDULES_SQL, {"endpoint_id": endpoint_id}, _views)


def schedule_of(team_ids: list[UUID], schedule_id: Any) -> ScheduleView | None:
    try:
        wanted = UUID(str(schedule_id))
    except ValueError:
        return None
    found = schedules_of(team_ids, wanted)
    return found[0] if found else None

"""Schedules as the Board and the shell show them: each with its team, owner endpoint and last fires.

A fire links to its todo and says how the todo ended (its Board state: pending, claimed, done,
dead…, or ``gone`` once retention purged it). Reads only the given teams' schedules: the Board
passes the viewer's teams, the shell one team.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.db import Statement
from todos.core.errors import Invalid
from todos.core.replica import read_connection
from todos.core.store import inputs

RECENT_FIRES = 5


def _schedules_sql(where: LiteralString, *, order: LiteralString = "tm.name, s.name") -> LiteralString:
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
ORDER BY {order}"""


SCHEDULES_SQL = _schedules_sql("s.team_id = ANY(%(teams)s::uuid[]) AND (%(id)s::uuid IS NULL OR s.id = %(id)s::uuid)")
# An agent's own schedules (the verb ``list_schedules``): those its endpoint owns, nothing else,
# a page at a time by name (unique in the team, so the name after which a page starts is an
# exact keyset position).
ENDPOINT_SCHEDULES_SQL = _schedules_sql(
    "s.endpoint_id = %(endpoint_id)s AND (%(after)s::text IS NULL OR s.name > %(after)s::text)",
    order="s.name LIMIT %(fetch)s",
)
# One of them, after a write (the verbs answer the schedule as list_schedules shows it).
ENDPOINT_SCHEDULE_SQL = _schedules_sql("s.endpoint_id = %(endpoint_id)s AND s.id = %(id)s")

LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX = 100, 200
# A page's ``next_cursor`` is the last name on it, as it is: every one-line string that is not
# blank (the shape of a name) is a keyset position, so the OpenAPI document states the whole rule
# as a pattern and any cursor that fits it is answered with a page, possibly empty.
CURSOR_PATTERN = inputs.NOT_BLANK_LINE_PATTERN
CURSOR_MAX_LENGTH = 200
_CURSOR_RE = re.compile(CURSOR_PATTERN)


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


@dataclass(frozen=True)
class SchedulePage:
    schedules: tuple[ScheduleView, ...]
    next_cursor: str | None


def decode_cursor(value: Any) -> str:
    value = inputs.require_str("cursor", value)
    if len(value) > CURSOR_MAX_LENGTH or not _CURSOR_RE.fullmatch(value):
        raise Invalid("cursor", "is not a cursor this server handed out (pass next_cursor back as it came)")
    return value


def endpoint_schedules(endpoint_id: UUID, *, limit: Any = None, cursor: Any = None) -> Statement[SchedulePage]:
    """The schedules an endpoint owns, by name, ``limit`` at a time (default 100, at most 200):
    what the agent verb ``list_schedules`` answers. ``next_cursor`` is null on the last page."""
    size = LIST_LIMIT_DEFAULT if limit is None else inputs.require_int("limit", limit, 1, LIST_LIMIT_MAX)
    after = None if cursor is None else decode_cursor(cursor)
    params = {"endpoint_id": endpoint_id, "after": after, "fetch": size + 1}

    def finish(rows: list[dict]) -> SchedulePage:
        views = tuple(_views(rows[:size]))
        return SchedulePage(views, views[-1].name if len(rows) > size else None)

    return Statement(ENDPOINT_SCHEDULES_SQL, params, finish)


def endpoint_schedule(endpoint_id: UUID, schedule_id: UUID) -> Statement[ScheduleView | None]:
    """One schedule the endpoint owns, or None (another endpoint's is None too)."""
    params = {"endpoint_id": endpoint_id, "id": schedule_id}
    return Statement(ENDPOINT_SCHEDULE_SQL, params, lambda rows: next(iter(_views(rows)), None))


def schedule_of(team_ids: list[UUID], schedule_id: Any) -> ScheduleView | None:
    try:
        wanted = UUID(str(schedule_id))
    except ValueError:
        return None
    found = schedules_of(team_ids, wanted)
    return found[0] if found else None

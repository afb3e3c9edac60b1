"""Queues' default run-time limits (``queue_settings``, 0026) as the Board and the shell show them."""

from __future__ import annotations

from typing import LiteralString
from uuid import UUID

from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer

TEAM_SQL: LiteralString = """
SELECT s.queue, s.timeout_seconds FROM queue_settings s WHERE s.team_id = %(team)s ORDER BY s.queue"""

VIEWER_SQL: LiteralString = """
SELECT s.team_id, s.queue, s.timeout_seconds FROM queue_settings s WHERE s.team_id = ANY(%(teams)s::uuid[])"""


def team_timeouts(team_id: UUID) -> dict[str, int]:
    """A team's queues that have a default run-time limit, by name (``manage.py queue_timeout``)."""
    with read_connection() as conn:
        rows = conn.execute(TEAM_SQL, {"team": team_id}).fetchall()
    return {row["queue"]: row["timeout_seconds"] for row in rows}


def viewer_timeouts(viewer: Viewer) -> dict[tuple[UUID, str], int]:
    """The default run-time limits of the viewer's teams' queues, by (team, queue)."""
    if not viewer.team_ids:
        return {}
    with read_connection() as conn:
        rows = conn.execute(VIEWER_SQL, {"teams": viewer.team_ids}).fetchall()
    return {(row["team_id"], row["queue"]): row["timeout_seconds"] for row in rows}

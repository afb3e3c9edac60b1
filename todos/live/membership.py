"""What a live consumer may receive: the teams its human belongs to, read fresh from the database.

Read at connect, when a membership notification arrives, and periodically as a backstop (a
membership row removed by hand, or a notification lost while the listener was down). One indexed
query on ``team_members (user_id, team_id)`` through the async pool: no thread, no ORM.
"""

from __future__ import annotations

from uuid import UUID

from todos.core.db import Statement, aexecute

_SQL = """
SELECT m.team_id
FROM auth_user u LEFT JOIN team_members m ON m.user_id = u.id
WHERE u.id = %(user_id)s AND u.is_active"""


def _teams(rows: list[dict]) -> frozenset[UUID] | None:
    if not rows:
        return None  # no such user any more, or deactivated
    return frozenset(UUID(str(row["team_id"])) for row in rows if row["team_id"] is not None)


def team_ids(user_id: int) -> Statement[frozenset[UUID] | None]:
    """The teams of an active user; ``None`` when the user is gone or deactivated."""
    return Statement(_SQL, {"user_id": user_id}, _teams)


async def ateam_ids(user_id: int) -> frozenset[UUID] | None:
    return await aexecute(team_ids(user_id))

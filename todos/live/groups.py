"""Channel-layer group names: who receives what inside one Board process.

A team's notifications go to the team's group only; a consumer joins the groups of the teams its
human belongs to, so a notification never reaches a browser whose human may not see it.
"""

from __future__ import annotations

from uuid import UUID

# Every consumer of the process: resync and listener status, which concern everyone.
EVERYONE = "live.all"


def team_group(team_id: UUID | str) -> str:
    return f"team.{UUID(str(team_id)).hex}"


def user_group(user_id: int) -> str:
    """A human's own group: membership changes that name them (e.g. being added to a team whose
    group they have not joined yet)."""
    return f"user.{int(user_id)}"

"""An audited setting of a team: who may write it, and how a write that changed nothing reads.

A team's concurrency-key limits, rate limits and queues' run-time limits are each written by one
statement of one shape: the writer acts on the team (a member with the setting's roles, or the
system with no person), the row is upserted beside its audit row and its change-log row, and a
statement that wrote nothing answers whether the team is unknown to the writer (``NotFound``) or
theirs to read only (``Forbidden``). Each statement keeps its own SQL; this holds the part they share
around it: the writer's parameters, the two guards the SQL names, and the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, LiteralString, NoReturn
from uuid import UUID

from todos.core.errors import Forbidden, Invalid, NotFound
from todos.core.store.fragments import member_of
from todos.core.store.scopes import OperatorScope

TEAM_EXISTS: LiteralString = "EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)"


def team_id(value: Any) -> UUID:
    try:
        return UUID(str(value))
    except ValueError:
        raise Invalid("team", "must be a team id") from None


@dataclass(frozen=True)
class TeamSetting:
    """The writer of one team's setting, as its statement binds and guards it."""

    params: dict[str, Any]  # team_id, user_id, actor: the audit row's writer
    allowed: LiteralString  # SQL: the writer may change the setting
    sees: LiteralString  # SQL: the writer may see the team
    refusal: str  # what a writer who sees the team but may not change it is told

    def refuse(self, row: dict) -> NoReturn:
        """The statement wrote nothing: the team is unknown to the writer, or theirs to read only."""
        if not row["sees"]:
            raise NotFound(f"no such team: {self.params['team_id']}")
        raise Forbidden(self.refusal)


def team_setting(op: OperatorScope | None, team: Any, *, roles: LiteralString, refusal: str) -> TeamSetting:
    """The writer ``op`` of a setting of ``team`` that members with ``roles`` may change (``op``
    None: the system, e.g. a ``manage.py`` command, which may change any existing team's)."""
    params: dict[str, Any] = {
        "team_id": team_id(team),
        "user_id": op.user_id if op else None,
        "actor": op.username if op else "system",
    }
    if op is None:
        return TeamSetting(params, "TRUE", TEAM_EXISTS, refusal)
    return TeamSetting(params, member_of("%(team_id)s", roles=roles), member_of("%(team_id)s"), refusal)

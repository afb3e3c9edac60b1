"""Team and membership writes. Site admins (Django superusers) manage every team; a team admin
manages their own team's members. Every change is audited."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core.db import Statement
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.endpoints import clean_slug
from todos.core.store.fragments import ADMIN_ROLES, audit_row, log_change, member_of
from todos.core.store.scopes import OperatorScope
from todos.core.words import ChangeOp

ROLES = ("viewer", "operator", "admin")

# What a membership change's audit row records: who, and the role before and after.
MEMBER_SET_DETAIL: LiteralString = """jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = up.user_id),
                              'from', (SELECT role FROM before), 'to', up.role)"""
MEMBER_REMOVE_DETAIL: LiteralString = (
    "jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = g.user_id), 'role', g.role)"
)

CREATOR_DETAIL: LiteralString = "jsonb_build_object('user', %(actor)s::text, 'from', NULL, 'to', c.role)"


@dataclass(frozen=True)
class TeamRecord:
    id: UUID
    slug: str
    name: str
    created_at: datetime


def _name(value: Any) -> str:
    value = inputs.require_str("name", value).strip()
    if not 1 <= len(value) <= 200:
        raise Invalid("name", "must be 1 to 200 characters")
    return value


def _role(value: Any) -> str:
    if value not in ROLES:
        raise Invalid("role", f"must be one of {', '.join(ROLES)}")
    return value


def _team(value: Any) -> UUID:
    try:
        return UUID(str(value))
    except ValueError:
        raise Invalid("team", "must be a team id") from None


def create_team(*, slug: Any, name: Any, by: OperatorScope | None = None) -> Statement[TeamRecord]:
    """A new team (site admins only: the caller checks ``is_superuser``). Its creator (``by``)
    becomes its admin in the same statement, so the team is on their Endpoints and Teams pages at
    once; a team created from the shell (``by`` None) starts with no members."""
    params = {
        "slug": clean_slug(slug),
        "name": _name(name),
        "user_id": by.user_id if by else None,
        "actor": by.username if by else "system",
    }
    sql = f"""
WITH ins AS (
    INSERT INTO teams (slug, name) VALUES (%(slug)s, %(name)s)
    ON CONFLICT (slug) DO NOTHING RETURNING *
),
audit AS ({audit_row("team.create", "ins", team="id", detail="jsonb_build_object('slug', slug)")}),
creator AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT ins.id, %(user_id)s, 'admin' FROM ins WHERE %(user_id)s::integer IS NOT NULL
    RETURNING team_id, user_id, role
),
creator_audit AS ({audit_row("member.set", "creator c", team="c.team_id", detail=CREATOR_DETAIL)}),
logged AS ({log_change(ChangeOp.MEMBERSHIP, "creator c", team="c.team_id", user="c.user_id")})
SELECT * FROM ins"""

    def finish(rows: list[dict]) -> TeamRecord:
        if not rows:
            raise Invalid("slug", f"{params['slug']!r} is already taken")
        return TeamRecord(**rows[0])

    return Statement(sql, params, finish)


def _may_manage(by: OperatorScope | None, superuser: bool) -> LiteralString:
    if by is None or superuser:
        return "TRUE"
    return member_of("%(team_id)s", roles=ADMIN_ROLES, user="%(by_id)s")


def set_member(
    by: OperatorScope | None, *, team_id: Any, user_id: Any, role: Any, superuser: bool = False
) -> Statement[str]:
    """Add a member or change their role. Returns ``"added"`` or ``"changed"``."""
    params = {
        "team_id": _team(team_id),
        "user_id": inputs.require_int("user", user_id, 1, 2**31 - 1),
        "role": _role(role),
        "by_id": by.user_id if by else None,
        "actor": by.username if by else "system",
    }
    may = _may_manage(by, superuser)
    sql = f"""
WITH before AS (SELECT role FROM team_members WHERE team_id = %(team_id)s AND user_id = %(user_id)s),
up AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT %(team_id)s, %(user_id)s, %(role)s
    WHERE {may} AND EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active)
      AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (team_id, user_id) DO UPDATE SET role = EXCLUDED.role
    RETURNING team_id, user_id, role
),
audit AS ({audit_row("member.set", "up", team="up.team_id", user="%(by_id)s", detail=MEMBER_SET_DETAIL)}),
logged AS ({log_change(ChangeOp.MEMBERSHIP, "up", team="up.team_id", user="up.user_id")})
SELECT (SELECT count(*) FROM up) AS changed, (SELECT role FROM before) AS before,
       EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       ({may}) AS may,
       EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active) AS user_exists"""

    def finish(rows: list[dict]) -> str:
        row = rows[0]
        if not row["team_exists"]:
            raise NotFound("no such team")
        if not row["may"]:
            raise Forbidden("only a team admin or a site admin can manage members")
        if not row["user_exists"]:
            raise Invalid("user", "no such active user")
        return "changed" if row["before"] else "added"

    return Statement(sql, params, finish)


def remove_member(by: OperatorScope | None, *, team_id: Any, user_id: Any, superuser: bool = False) -> Statement[None]:
    """Remove a member. Their live Board connections stop receiving the team's updates."""
    params = {
        "team_id": _team(team_id),
        "user_id": inputs.require_int("user", user_id, 1, 2**31 - 1),
        "by_id": by.user_id if by else None,
        "actor": by.username if by else "system",
    }
    may = _may_manage(by, superuser)
    sql = f"""
WITH gone AS (
    DELETE FROM team_members
    WHERE team_id = %(team_id)s AND user_id = %(user_id)s
      AND {may}
    RETURNING team_id, user_id, role
),
audit AS ({audit_row("member.remove", "gone g", team="g.team_id", user="%(by_id)s", detail=MEMBER_REMOVE_DETAIL)}),
logged AS ({log_change(ChangeOp.MEMBERSHIP, "gone g", team="g.team_id", user="g.user_id")})
SELECT (SELECT count(*) FROM gone) AS removed,
       EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       ({may}) AS may"""

    def finish(rows: list[dict]) -> None:
        row = rows[0]
        if not row["team_exists"]:
            raise NotFound("no such team")
        if not row["may"]:
            raise Forbidden("only a team admin or a site admin can manage members")
        if not row["removed"]:
            raise Conflict("not a member of this team")

    return Statement(sql, params, finish)

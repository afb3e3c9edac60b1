"""People: site admins create them, deactivate and reactivate them, and reset their passwords.

A person is Django's ``auth_user`` row (sign-in, sessions and password hashing stay Django's).
The writes are the store's own statements so each one carries its audit rows: one site-level row
(``team_id`` NULL, read by site admins on the People page) and one row in each of the person's
teams, so a team's Activity says that a member was deactivated. A deactivation also writes a
``membership`` change per team: the person's open live connections re-check and close.

A new person gets a temporary password, shown once to whoever created them and never stored in
the clear (:func:`temporary_password`); they change it under "Change password".
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any, LiteralString
from uuid import UUID

from django.conf import settings
from django.contrib.auth.hashers import make_password

from todos.core.db import Statement
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.fragments import audit_row, log_change
from todos.core.store.scopes import OperatorScope
from todos.core.store.teams import ROLES
from todos.core.words import ChangeOp

# Django's own rule for usernames (UnicodeUsernameValidator), so the sign-in form accepts them.
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")

# The rows a person's change is audited on: their teams (one row each), joined to the change.
PERSON_TEAMS: LiteralString = "ch JOIN team_members tm ON tm.user_id = ch.id"
PERSON_DETAIL: LiteralString = "jsonb_build_object('user', ch.username)"


@dataclass(frozen=True)
class PersonRecord:
    id: int
    username: str
    is_superuser: bool
    is_active: bool


@dataclass(frozen=True)
class NewPassword:
    """A person and the temporary password they sign in with; the caller shows it once."""

    person: PersonRecord
    password: str


def temporary_password() -> str:
    """Sixteen random URL-safe characters (96 bits): typed once, then changed by its owner."""
    return secrets.token_urlsafe(12)


def clean_username(value: Any) -> str:
    value = inputs.require_str("username", value).strip()
    if not value:
        raise Invalid("username", "is required")
    if not USERNAME_RE.fullmatch(value):
        raise Invalid("username", "must be 1 to 150 letters, digits or the characters . @ + - _")
    return value


def _role(value: Any) -> str:
    if value not in ROLES:
        raise Invalid("role", f"must be one of {', '.join(ROLES)}")
    return value


def _actor(by: OperatorScope | None) -> dict:
    return {"by_id": by.user_id if by else None, "actor": by.username if by else "system"}


def create_person(
    by: OperatorScope | None,
    *,
    username: Any,
    superuser: bool = False,
    team_id: UUID | None = None,
    role: Any = None,
    password: str | None = None,
) -> Statement[NewPassword]:
    """A new active person with a temporary password, optionally made a member of a team.

    The caller checks that ``by`` is a site admin (the Board) or is the shell (``by`` None).
    """
    if (team_id is None) != (role is None):
        raise Invalid("role", "a team and a role go together")
    clear = password or temporary_password()
    params = {
        "username": clean_username(username),
        "superuser": bool(superuser),
        "password": make_password(clear),
        "team_id": team_id,
        "role": _role(role) if role is not None else None,
        **_actor(by),
    }
    sql = f"""
WITH ins AS (
    -- a person, unless the username is taken or the named team does not exist
    INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,
                           is_active, date_joined)
    SELECT %(password)s, %(superuser)s, %(username)s, '', '', '', %(superuser)s, true, now()
    WHERE %(team_id)s::uuid IS NULL OR EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s::uuid)
    ON CONFLICT (username) DO NOTHING
    RETURNING id, username, is_superuser, is_active
),
joined AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT %(team_id)s::uuid, ins.id, %(role)s FROM ins WHERE %(team_id)s::uuid IS NOT NULL
    RETURNING team_id, user_id, role
),
audit AS ({
        audit_row(
            "person.create",
            "ins ch",
            team="NULL",
            user="%(by_id)s",
            detail="jsonb_build_object('user', ch.username, 'site_admin', ch.is_superuser)",
        )
    }),
member_audit AS ({
        audit_row(
            "member.set",
            "joined j",
            team="j.team_id",
            user="%(by_id)s",
            detail="jsonb_build_object('user', %(username)s::text, 'from', NULL, 'to', j.role)",
        )
    }),
logged AS ({log_change(ChangeOp.MEMBERSHIP, "joined j", team="j.team_id", user="j.user_id")})
SELECT ins.*, NULL AS taken FROM ins
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM auth_user WHERE username = %(username)s)
WHERE NOT EXISTS (SELECT 1 FROM ins)"""

    def finish(rows: list[dict]) -> NewPassword:
        row = rows[0]
        if row["id"] is None:
            if row["taken"]:
                raise Invalid("username", f"{params['username']!r} is already taken")
            raise NotFound("no such team")
        return NewPassword(PersonRecord(**{k: row[k] for k in ("id", "username", "is_superuser", "is_active")}), clear)

    return Statement(sql, params, finish)


def set_active(by: OperatorScope | None, *, user_id: Any, active: bool) -> Statement[PersonRecord]:
    """Deactivate (``active=False``) or reactivate a person. A deactivated person cannot sign in,
    their sessions end at their next request and their live connections close; their
    memberships stay, so reactivating gives them back the same teams."""
    params = {"user_id": inputs.require_int("user", user_id, 1, 2**31 - 1), "active": bool(active), **_actor(by)}
    if by is not None and params["user_id"] == by.user_id and not active:
        raise Invalid("user", "you cannot deactivate yourself")
    action: LiteralString = "person.reactivate" if active else "person.deactivate"
    sql = f"""
WITH ch AS (
    -- guard: the person exists and is not already in the state asked for
    UPDATE auth_user SET is_active = %(active)s
    WHERE id = %(user_id)s AND is_active <> %(active)s
    RETURNING id, username, is_superuser, is_active
),
site AS ({audit_row(action, "ch", team="NULL", user="%(by_id)s", detail=PERSON_DETAIL)}),
teams AS ({audit_row(action, PERSON_TEAMS, team="tm.team_id", user="%(by_id)s", detail=PERSON_DETAIL)}),
logged AS ({log_change(ChangeOp.MEMBERSHIP, PERSON_TEAMS, team="tm.team_id", user="ch.id")})
SELECT ch.*, true AS existed FROM ch
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s)
WHERE NOT EXISTS (SELECT 1 FROM ch)"""

    def finish(rows: list[dict]) -> PersonRecord:
        row = rows[0]
        if row["id"] is None:
            if not row["existed"]:
                raise NotFound("no such person")
            raise Conflict("already active" if active else "already deactivated")
        return PersonRecord(**{k: row[k] for k in ("id", "username", "is_superuser", "is_active")})

    return Statement(sql, params, finish)


def reset_password(by: OperatorScope | None, *, user_id: Any, password: str | None = None) -> Statement[NewPassword]:
    """A new temporary password for a person (their sessions end: Django ties a session to the
    password hash). Refused for a deactivated person (reactivate first), and, with local passwords
    off (``BOARD_OIDC_ONLY``, docs/sign-in.md), for anyone but a site admin: they sign in through
    the provider, and a password would let nobody in."""
    clear = password or temporary_password()
    params = {
        "user_id": inputs.require_int("user", user_id, 1, 2**31 - 1),
        "password": make_password(clear),
        "passwords_on": not settings.BOARD_OIDC_ONLY,
        **_actor(by),
    }
    sql = f"""
WITH ch AS (
    -- guard: an active person who signs in with a password (a site admin always does)
    UPDATE auth_user SET password = %(password)s
    WHERE id = %(user_id)s AND is_active AND (is_superuser OR %(passwords_on)s)
    RETURNING id, username, is_superuser, is_active
),
site AS ({audit_row("person.password_reset", "ch", team="NULL", user="%(by_id)s", detail=PERSON_DETAIL)}),
teams AS ({audit_row("person.password_reset", PERSON_TEAMS, team="tm.team_id", user="%(by_id)s", detail=PERSON_DETAIL)})
SELECT ch.*, true AS existed FROM ch
UNION ALL
SELECT NULL, u.username, u.is_superuser, u.is_active, u.id IS NOT NULL
FROM (SELECT 1) one LEFT JOIN auth_user u ON u.id = %(user_id)s
WHERE NOT EXISTS (SELECT 1 FROM ch)"""

    def finish(rows: list[dict]) -> NewPassword:
        row = rows[0]
        if row["id"] is None:
            if not row["existed"]:
                raise NotFound("no such person")
            if not row["is_active"]:
                raise Conflict("deactivated: reactivate them first")
            raise Conflict(f"local passwords are off: {row['username']} signs in through the identity provider")
        return NewPassword(PersonRecord(**{k: row[k] for k in ("id", "username", "is_superuser", "is_active")}), clear)

    return Statement(sql, params, finish)

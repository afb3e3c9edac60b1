"""Single sign-on writes: who a provider's subject is, and the team roles its groups grant.

A sign-in first finds its person (:func:`sign_in`): by the provider's subject when it was seen
before, else by verified email (case-insensitive), else a new person. Then :func:`apply_mappings`
makes the memberships the mappings own follow the sign-in's groups. Site admins edit the mappings
(:func:`add_mapping`, :func:`remove_mapping`). The rules in words: docs/sign-in.md.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, LiteralString
from uuid import UUID

from todos.core.db import Statement
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.fragments import audit_row, log_change
from todos.core.store.scopes import OperatorScope
from todos.core.store.teams import ROLES
from todos.core.words import ChangeOp

# Who the audit trail names for a change a sign-in made.
SIGN_IN_ACTOR = "single sign-on"

# The highest of several roles one person's groups grant in one team.
ROLE_RANK: LiteralString = "array_position(ARRAY['viewer', 'operator', 'admin'], m.role)"

MAPPING_DETAIL: LiteralString = """jsonb_build_object('group', c.group_value, 'role', c.role,
                              'team', (SELECT slug FROM teams WHERE id = c.team_id))"""


@dataclass(frozen=True)
class SignedIn:
    user_id: int
    username: str
    is_active: bool
    created: bool


@dataclass(frozen=True)
class MappingOutcome:
    added: int
    changed: int
    removed: int


@dataclass(frozen=True)
class MappingRecord:
    id: int
    group_value: str
    team_id: UUID
    role: str


def _text(field: str, value: Any, limit: int) -> str:
    value = inputs.require_str(field, value).strip()
    if not value:
        raise Invalid(field, "is required")
    if len(value) > limit:
        raise Invalid(field, f"must be at most {limit} characters")
    return value


def username_candidates(email: str, subject: str) -> list[str]:
    """The email as username, or, when another person holds it, the email with a short digest of
    the subject (Django's username rule allows ``@ . + - _``)."""
    base = email.lower()[:140]
    return [base, f"{base}-{hashlib.sha256(subject.encode()).hexdigest()[:8]}"]


def sign_in(*, issuer: Any, subject: Any, email: Any, email_verified: bool) -> Statement[SignedIn]:
    """The person a provider's sign-in is: matched by subject, else by verified email, else created.

    The identity row is written with the match, so a later sign-in with a changed email still
    finds them; their email follows the provider's. Two people with the same email refuse the
    match (which one is it?) rather than pick one.
    """
    email = _text("email", email, 254)
    if "@" not in email:
        raise Invalid("email", "must be an email address")
    sub = _text("subject", subject, 255)
    params = {
        "issuer": _text("issuer", issuer, 500),
        "subject": sub,
        "email": email,
        "verified": bool(email_verified),
        "candidates": username_candidates(email, sub),
        "actor": SIGN_IN_ACTOR,
    }
    sql = f"""
WITH known AS (
    SELECT u.id FROM person_identities pi JOIN auth_user u ON u.id = pi.user_id
    WHERE pi.issuer = %(issuer)s AND pi.subject = %(subject)s
),
by_email AS (
    -- only a verified email matches an existing person, and only when one person has it
    SELECT id FROM auth_user
    WHERE %(verified)s AND lower(email) = lower(%(email)s) AND NOT EXISTS (SELECT 1 FROM known)
    LIMIT 2
),
free AS (
    SELECT c.name FROM unnest(%(candidates)s::text[]) WITH ORDINALITY AS c(name, n)
    WHERE NOT EXISTS (SELECT 1 FROM auth_user WHERE username = c.name)
    ORDER BY c.n LIMIT 1
),
created AS (
    -- guard: no known identity, no person with this verified email; a free username
    INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,
                           is_active, date_joined)
    SELECT '!', false, free.name, '', '', %(email)s, false, true, now() FROM free
    WHERE NOT EXISTS (SELECT 1 FROM known) AND NOT EXISTS (SELECT 1 FROM by_email)
    ON CONFLICT (username) DO NOTHING
    RETURNING id, username, is_active
),
matched AS (
    SELECT id FROM known
    UNION ALL
    SELECT id FROM by_email WHERE (SELECT count(*) FROM by_email) = 1
),
refreshed AS (
    -- an existing person's email follows the provider's
    UPDATE auth_user u SET email = %(email)s FROM matched m WHERE u.id = m.id AND u.email <> %(email)s
    RETURNING u.id
),
person AS (
    SELECT u.id, u.username, u.is_active, false AS created FROM auth_user u JOIN matched m ON m.id = u.id
    UNION ALL
    SELECT id, username, is_active, true FROM created
),
linked AS (
    INSERT INTO person_identities (user_id, issuer, subject)
    SELECT id, %(issuer)s, %(subject)s FROM person
    ON CONFLICT (issuer, subject) DO NOTHING
),
audit AS ({
        audit_row(
            "person.create",
            "created ch",
            team="NULL",
            user="NULL",
            detail="jsonb_build_object('user', ch.username, 'site_admin', false, 'via', 'single sign-on')",
        )
    })
SELECT person.*, (SELECT count(*) FROM by_email) AS email_matches FROM person
UNION ALL
SELECT NULL, NULL, NULL, NULL, (SELECT count(*) FROM by_email) WHERE NOT EXISTS (SELECT 1 FROM person)"""

    def finish(rows: list[dict]) -> SignedIn:
        row = rows[0]
        if row["id"] is None:
            if row["email_matches"] > 1:
                raise Conflict("more than one person has this email; a site admin must change one of them")
            raise Conflict("another sign-in created this person at the same moment; sign in again")
        return SignedIn(user_id=row["id"], username=row["username"], is_active=row["is_active"], created=row["created"])

    return Statement(sql, params, finish)


def clean_groups(value: Any) -> list[str]:
    """The groups claim as a list of strings: a list, or one string; anything else is no groups."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return sorted({item for item in value if isinstance(item, str) and item})


def apply_mappings(*, user_id: Any, groups: Any) -> Statement[MappingOutcome]:
    """Make the memberships the mappings own follow ``groups``: add the teams the groups grant
    (the highest role when several do), change a role the groups changed, remove what no group
    grants any more. A membership granted by hand is left alone, even in a team a group grants."""
    params = {
        "user_id": inputs.require_int("user", user_id, 1, 2**31 - 1),
        "groups": clean_groups(groups),
        "actor": SIGN_IN_ACTOR,
    }
    sql = f"""
WITH wanted AS (
    SELECT m.team_id,
           (array_agg(m.role ORDER BY {ROLE_RANK} DESC))[1] AS role
    FROM oidc_role_mappings m
    WHERE m.group_value = ANY(%(groups)s::text[])
    GROUP BY m.team_id
),
current AS (
    SELECT tm.team_id, tm.role, EXISTS (
        SELECT 1 FROM oidc_memberships o WHERE o.team_id = tm.team_id AND o.user_id = tm.user_id
    ) AS mapped
    FROM team_members tm WHERE tm.user_id = %(user_id)s
),
added AS (
    -- guard: an active person, a team they are not in yet
    INSERT INTO team_members (team_id, user_id, role)
    SELECT w.team_id, %(user_id)s, w.role FROM wanted w
    WHERE NOT EXISTS (SELECT 1 FROM current c WHERE c.team_id = w.team_id)
      AND EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active)
    ON CONFLICT (team_id, user_id) DO NOTHING
    RETURNING team_id, user_id, role
),
owned AS (
    INSERT INTO oidc_memberships (team_id, user_id) SELECT team_id, user_id FROM added
    ON CONFLICT DO NOTHING
),
changed AS (
    -- guard: a membership the mappings own whose role the groups changed
    UPDATE team_members tm SET role = w.role
    FROM wanted w, current c
    WHERE tm.user_id = %(user_id)s AND tm.team_id = w.team_id AND c.team_id = w.team_id
      AND c.mapped AND c.role <> w.role
    RETURNING tm.team_id, tm.user_id, tm.role, c.role AS before
),
removed AS (
    -- guard: a membership the mappings own that no group grants any more
    DELETE FROM team_members tm
    USING current c
    WHERE tm.user_id = %(user_id)s AND tm.team_id = c.team_id AND c.mapped
      AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.team_id = c.team_id)
    RETURNING tm.team_id, tm.user_id, tm.role
),
set_rows AS (
    SELECT team_id, user_id, role, NULL::text AS before FROM added
    UNION ALL
    SELECT team_id, user_id, role, before FROM changed
),
set_audit AS ({
        audit_row(
            "member.set",
            "set_rows s",
            team="s.team_id",
            user="NULL",
            detail='''jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = s.user_id),
                              'from', s.before, 'to', s.role, 'via', 'single sign-on')''',
        )
    }),
remove_audit AS ({
        audit_row(
            "member.remove",
            "removed g",
            team="g.team_id",
            user="NULL",
            detail='''jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = g.user_id),
                              'role', g.role, 'via', 'single sign-on')''',
        )
    }),
logged_set AS ({log_change(ChangeOp.MEMBERSHIP, "set_rows s", team="s.team_id", user="s.user_id")}),
logged_removed AS ({log_change(ChangeOp.MEMBERSHIP, "removed g", team="g.team_id", user="g.user_id")})
SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM changed) AS changed,
       (SELECT count(*) FROM removed) AS removed"""

    def finish(rows: list[dict]) -> MappingOutcome:
        row = rows[0]
        return MappingOutcome(added=row["added"], changed=row["changed"], removed=row["removed"])

    return Statement(sql, params, finish)


def _actor(by: OperatorScope | None) -> dict:
    return {"by_id": by.user_id if by else None, "actor": by.username if by else "system"}


def _role(value: Any) -> str:
    if value not in ROLES:
        raise Invalid("role", f"must be one of {', '.join(ROLES)}")
    return value


def add_mapping(by: OperatorScope | None, *, group_value: Any, team_id: Any, role: Any) -> Statement[MappingRecord]:
    """A provider group that grants a team role at each sign-in (site admins only: the caller
    checks). A second mapping of the same group to the same team is refused, not merged."""
    try:
        team = UUID(str(team_id))
    except ValueError:
        raise Invalid("team", "must be a team id") from None
    params = {"group": _text("group", group_value, 255), "team_id": team, "role": _role(role), **_actor(by)}
    sql = f"""
WITH ins AS (
    -- guard: the team exists and the group does not map to it yet
    INSERT INTO oidc_role_mappings (group_value, team_id, role)
    SELECT %(group)s, %(team_id)s, %(role)s WHERE EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (group_value, team_id) DO NOTHING
    RETURNING id, group_value, team_id, role
),
audit AS ({audit_row("sign_in.mapping_add", "ins c", team="c.team_id", user="%(by_id)s", detail=MAPPING_DETAIL)})
SELECT ins.*, true AS team_exists FROM ins
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
WHERE NOT EXISTS (SELECT 1 FROM ins)"""

    def finish(rows: list[dict]) -> MappingRecord:
        row = rows[0]
        if row["id"] is None:
            if not row["team_exists"]:
                raise NotFound("no such team")
            raise Invalid("group", f"{params['group']!r} already maps to this team; remove it first to change its role")
        return MappingRecord(id=row["id"], group_value=row["group_value"], team_id=row["team_id"], role=row["role"])

    return Statement(sql, params, finish)


def remove_mapping(by: OperatorScope | None, *, mapping_id: Any) -> Statement[MappingRecord]:
    """Remove a mapping. Memberships it granted stay until each person's next sign-in."""
    params = {"id": inputs.require_int("mapping", mapping_id, 1, 2**62), **_actor(by)}
    sql = f"""
WITH gone AS (
    -- guard: the mapping exists
    DELETE FROM oidc_role_mappings WHERE id = %(id)s RETURNING id, group_value, team_id, role
),
audit AS ({audit_row("sign_in.mapping_remove", "gone c", team="c.team_id", user="%(by_id)s", detail=MAPPING_DETAIL)})
SELECT * FROM gone"""

    def finish(rows: list[dict]) -> MappingRecord:
        if not rows:
            raise NotFound("no such mapping")
        row = rows[0]
        return MappingRecord(id=row["id"], group_value=row["group_value"], team_id=row["team_id"], role=row["role"])

    return Statement(sql, params, finish)

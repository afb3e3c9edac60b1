"""The People page's reads (site admins only: the view checks ``is_superuser``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString

from todos.core.replica import read_connection

PEOPLE_LIMIT = 500

PEOPLE_SQL: LiteralString = """
SELECT u.id, u.username, u.is_superuser, u.is_active, u.last_login, u.date_joined,
       coalesce((SELECT array_agg(t.slug || ':' || m.role ORDER BY t.slug)
                 FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = u.id), '{}') AS teams
FROM auth_user u
ORDER BY u.is_active DESC, u.username
LIMIT %(limit)s"""

# One person by id, for a confirmation that names them (the same columns as PEOPLE_SQL).
PERSON_BY_ID_SQL: LiteralString = """
SELECT u.id, u.username, u.is_superuser, u.is_active, u.last_login, u.date_joined,
       coalesce((SELECT array_agg(t.slug || ':' || m.role ORDER BY t.slug)
                 FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = u.id), '{}') AS teams
FROM auth_user u
WHERE u.id = %(id)s"""

# Site-level audit rows (people), newest first, from audit_log_site_at.
CHANGES_SQL: LiteralString = """
SELECT l.at, l.actor, l.action, l.detail->>'user' AS person
FROM audit_log l WHERE l.team_id IS NULL
ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s"""

PERSON_SQL: LiteralString = "SELECT id, username, is_active FROM auth_user WHERE username = %(username)s"


@dataclass(frozen=True)
class Person:
    id: int
    username: str
    is_superuser: bool
    is_active: bool
    last_login: datetime | None
    date_joined: datetime
    teams: tuple[tuple[str, str], ...]  # (team slug, role)


@dataclass(frozen=True)
class PersonChange:
    at: datetime
    actor: str
    action: str
    person: str | None

    @property
    def sentence(self) -> str:
        verb = {
            "person.create": "created",
            "person.deactivate": "deactivated",
            "person.reactivate": "reactivated",
            "person.password_reset": "reset the password of",
        }.get(self.action, self.action)
        return f"{self.actor} {verb} {self.person or 'someone'}"


def _person(row) -> Person:
    return Person(
        id=row["id"],
        username=row["username"],
        is_superuser=row["is_superuser"],
        is_active=row["is_active"],
        last_login=row["last_login"],
        date_joined=row["date_joined"],
        teams=tuple((slug, role) for slug, _, role in (t.partition(":") for t in row["teams"])),
    )


def people(limit: int = PEOPLE_LIMIT) -> list[Person]:
    with read_connection() as conn:
        rows = conn.execute(PEOPLE_SQL, {"limit": limit}).fetchall()
    return [_person(row) for row in rows]


def person(user_id: int) -> Person | None:
    """One person, active or not (None when there is no such id)."""
    with read_connection() as conn:
        row = conn.execute(PERSON_BY_ID_SQL, {"id": user_id}).fetchone()
    return _person(row) if row else None


def recent_changes(limit: int = 20) -> list[PersonChange]:
    with read_connection() as conn:
        return [PersonChange(**row) for row in conn.execute(CHANGES_SQL, {"limit": limit}).fetchall()]


def person_by_username(username: str) -> dict | None:
    """``{id, username, is_active}`` of any person, active or not (the shell's lookups)."""
    with read_connection() as conn:
        return conn.execute(PERSON_SQL, {"username": username}).fetchone()

"""Single sign-on reads: the group → team role mappings (site admins only: the caller checks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from todos.core.replica import read_connection

MAPPINGS_SQL: LiteralString = """
SELECT m.id, m.group_value, m.team_id, t.slug AS team_slug, t.name AS team_name, m.role
FROM oidc_role_mappings m JOIN teams t ON t.id = m.team_id
ORDER BY m.group_value, t.slug"""


@dataclass(frozen=True)
class RoleMapping:
    id: int
    group_value: str
    team_id: UUID
    team_slug: str
    team_name: str
    role: str


def role_mappings() -> list[RoleMapping]:
    with read_connection() as conn:
        return [RoleMapping(**row) for row in conn.execute(MAPPINGS_SQL).fetchall()]

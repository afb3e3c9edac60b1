"""A person's own Board settings (``person_preferences``): today, the zone times are shown in.

A preference is the person's alone: it touches no todo, attempt, team or audit row, and writes
no change-log row (nothing anyone else sees changes).
"""

from __future__ import annotations

from typing import Any

from todos.core import schedule_times
from todos.core.db import Statement
from todos.core.errors import Invalid, NotFound
from todos.core.store import inputs

BROWSER_ZONE = "browser"  # the zone the person's browser reports, request by request

ZONE_CHOICE_PROBLEM = "choose UTC, your browser's zone, or an IANA name such as Europe/Paris"


def clean_time_zone(value: Any, field: str = "time_zone") -> str:
    """``'browser'`` or a known IANA name (``UTC`` included); anything else names the problem."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(field, f"is required: {ZONE_CHOICE_PROBLEM}")
    name = value.strip()
    if name == BROWSER_ZONE:
        return name
    try:
        return schedule_times.zone(name, field).key
    except Invalid:
        shown = inputs.require_line(field, name)[:64]
        raise Invalid(field, f"{shown!r} is not a time zone: {ZONE_CHOICE_PROBLEM}") from None


def set_time_zone(*, user_id: Any, time_zone: Any) -> Statement[str]:
    """Remember the zone a person's Board shows times in (``'browser'`` or an IANA name)."""
    params = {
        "user_id": inputs.require_int("user", user_id, 1, 2**31 - 1),
        "time_zone": clean_time_zone(time_zone),
    }
    # guard: the person exists and is active (a deactivated person's request never gets here).
    # Effect: one person_preferences row inserted or updated; no todo or attempt row is touched.
    sql = """
INSERT INTO person_preferences AS p (user_id, time_zone)
SELECT u.id, %(time_zone)s FROM auth_user u WHERE u.id = %(user_id)s AND u.is_active
ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone, updated_at = now()
RETURNING p.time_zone"""

    def finish(rows: list[dict]) -> str:
        if not rows:
            raise NotFound("no such person")
        return rows[0]["time_zone"]

    return Statement(sql, params, finish)

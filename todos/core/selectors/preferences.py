"""A person's own Board settings, read on each of their requests (the store writes them)."""

from __future__ import annotations

from typing import LiteralString

from todos.core.db import pool

TIME_ZONE_SQL: LiteralString = "SELECT time_zone FROM person_preferences WHERE user_id = %(user_id)s"


def time_zone_choice(user_id: int) -> str | None:
    """What the person chose (``'browser'`` or an IANA name), or None if they never chose.

    Read on the primary, never a replica: the page a person lands on right after switching
    must already show their new choice.
    """
    with pool().connection() as conn:
        row = conn.execute(TIME_ZONE_SQL, {"user_id": user_id}).fetchone()
    return row["time_zone"] if row else None

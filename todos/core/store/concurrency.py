"""Concurrency-key limits: how many todos of a team carrying one key may be claimed at once.

A team's key is one row of ``concurrency_keys`` (0011): ``max_claimed`` (default 1, so a key
nobody configured means "one at a time") and ``claimed``, the slots in use, which a claim takes
(``take_concurrency_slot``, 0017, called from ``claims.py``) and a trigger (0011) gives back.
Setting a limit is one upsert of ``max_claimed`` that leaves ``claimed`` alone: lowering a limit
below what is running stops new claims until enough finish, never the running ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from todos.core.db import Statement
from todos.core.errors import Invalid
from todos.core.store import inputs
from todos.core.store.fragments import ACTING_ROLES, audit_row, log_change, ready_message
from todos.core.store.scopes import OperatorScope
from todos.core.store.team_setting import TEAM_EXISTS, team_setting
from todos.core.words import ChangeOp, TodoState


@dataclass(frozen=True)
class KeyLimit:
    team_id: UUID
    key: str
    max_claimed: int
    claimed: int
    previous: int | None  # the limit before this change (None: the key had no row: 1 applied)


def set_limit(op: OperatorScope | None, team_id: Any, key: Any, limit: Any) -> Statement[KeyLimit]:
    """Set the limit of ``key`` for a team (``op`` None: the system, e.g. ``manage.py
    concurrency``; otherwise an operator or admin of the team).

    Guard: the person acts on the team. Effect: ``max_claimed`` upserted. Audit:
    ``concurrency.limit`` with the old and new limit. Log: a team change (the Board's overview
    re-renders). A raised limit may free slots: agents waiting on queues holding pending work of
    the key are woken.
    """
    name = inputs.concurrency_key(key, "key")
    if name is None:
        raise Invalid("key", "must not be empty")
    writer = team_setting(op, team_id, roles=ACTING_ROLES, refusal="your role on this team is read-only")
    params = {**writer.params, "key": name, "limit": inputs.concurrency_limit(limit)}
    sql = f"""
WITH before AS (
    SELECT k.max_claimed FROM concurrency_keys k WHERE k.team_id = %(team_id)s AND k.key = %(key)s
),
changed AS (
    INSERT INTO concurrency_keys AS k (team_id, key, max_claimed)
    SELECT %(team_id)s, %(key)s, %(limit)s
    WHERE {writer.allowed} AND {TEAM_EXISTS}
    ON CONFLICT (team_id, key) DO UPDATE SET max_claimed = excluded.max_claimed, updated_at = now()
    RETURNING k.team_id, k.key, k.max_claimed, k.claimed
),
audit AS ({
        audit_row(
            "concurrency.limit",
            "changed c",
            team="c.team_id",
            note="c.key",
            detail="jsonb_build_object('key', c.key, 'old', (SELECT max_claimed FROM before), 'new', c.max_claimed)",
        )
    }),
logged AS ({log_change(ChangeOp.CONCURRENCY, "changed c", team="c.team_id")}),
woken AS (
    SELECT DISTINCT t.endpoint_id, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.concurrency_key = %(key)s AND t.state = {TodoState.PENDING.sql} AND e.team_id = %(team_id)s
      AND EXISTS (SELECT 1 FROM changed)
)
SELECT c.*, (SELECT max_claimed FROM before) AS previous,
       {writer.sees} AS sees,
       (SELECT count({ready_message("w.endpoint_id", "w.queue")})
        FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true"""

    def finish(rows: list[dict]) -> KeyLimit:
        row = rows[0]
        if row["team_id"] is None:
            writer.refuse(row)
        return KeyLimit(row["team_id"], row["key"], row["max_claimed"], row["claimed"], row["previous"])

    return Statement(sql, params, finish)

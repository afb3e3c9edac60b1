"""Rate limits per key: at most N claims of a team's todos carrying one rate key per interval.

A team's limit is one row of ``rate_limits`` (0025): ``allowance`` N, ``per`` (second, minute,
hour) and the ring of its last N claim times, which a claim takes an entry of
(``take_rate_allowance``, called from ``claims.py``). A key without a row is unlimited. Setting a
limit resizes the ring, keeping its newest entries, so a change never forgets the claims just
made; removing it deletes the row. Both are a team admin's (or the system's, ``manage.py
ratelimit``) and audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core.db import Statement
from todos.core.errors import Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.fragments import ADMIN_ROLES, audit_row, log_change, ready_message
from todos.core.store.scopes import OperatorScope
from todos.core.store.team_setting import TEAM_EXISTS, TeamSetting, team_setting
from todos.core.words import ChangeOp, TodoState


@dataclass(frozen=True)
class RateLimit:
    team_id: UUID
    key: str
    allowance: int
    per: str
    refills_at: datetime | None
    previous: str | None  # the limit before this change, as "N per interval" (None: it had none)


def _key(value: Any) -> str:
    name = inputs.rate_key(value, "key")
    if name is None:
        raise Invalid("key", "must not be empty")
    return name


def _writer(op: OperatorScope | None, team_id: Any) -> TeamSetting:
    """A team admin sets and removes limits; the system may too."""
    return team_setting(op, team_id, roles=ADMIN_ROLES, refusal="only a team admin may set or remove rate limits")


def _woken(changed: LiteralString) -> LiteralString:
    """The (endpoint, queue) pairs holding pending work of the key, when ``changed`` has a row:
    a raised or removed limit may let it be claimed now."""
    return f"""SELECT DISTINCT t.endpoint_id, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.rate_key = %(key)s AND t.state = {TodoState.PENDING.sql} AND e.team_id = %(team_id)s
      AND EXISTS (SELECT 1 FROM {changed})"""


SET_DETAIL: LiteralString = """jsonb_build_object('key', c.key, 'old', (SELECT limit_text FROM before),
                              'new', c.allowance || ' per ' || c.per)"""


def set_limit(op: OperatorScope | None, team_id: Any, key: Any, allowance: Any, per: Any) -> Statement[RateLimit]:
    """Set ``key``'s limit for a team to ``allowance`` claims per ``per`` (``op`` None: the system).

    Guard: the person is an admin of the team. Effect: the row upserted; an existing ring is
    resized to ``allowance`` entries keeping its newest (``rate_ring_resized``, 0025), and
    ``refills_at`` recomputed for the new ring and interval. Audit: ``rate.limit`` with the old
    and new limit. Log: a team change (the overview re-renders). Agents waiting on queues with
    pending work of the key are woken (a raised limit may give allowance now).
    """
    writer = _writer(op, team_id)
    params = {
        **writer.params,
        "key": _key(key),
        "allowance": inputs.rate_allowance(allowance),
        "per": inputs.rate_interval(per),
    }
    sql = f"""
WITH before AS (
    SELECT r.allowance || ' per ' || r.per AS limit_text FROM rate_limits r
    WHERE r.team_id = %(team_id)s AND r.key = %(key)s
),
changed AS (
    INSERT INTO rate_limits AS r (team_id, key, allowance, per, taken)
    SELECT %(team_id)s, %(key)s, %(allowance)s, %(per)s,
           array_fill(NULL::timestamptz, ARRAY[%(allowance)s::int])
    WHERE {writer.allowed} AND {TEAM_EXISTS}
    ON CONFLICT (team_id, key) DO UPDATE SET
        allowance = excluded.allowance,
        per = excluded.per,
        taken = rate_ring_resized(r.taken, r.next, excluded.allowance),
        next = 1,
        refills_at = (rate_ring_resized(r.taken, r.next, excluded.allowance))[1] + rate_period(excluded.per),
        updated_at = now()
    RETURNING r.team_id, r.key, r.allowance, r.per, r.refills_at
),
audit AS ({
        audit_row(
            "rate.limit",
            "changed c",
            team="c.team_id",
            note="c.key",
            detail=SET_DETAIL,
        )
    }),
logged AS ({log_change(ChangeOp.RATE, "changed c", team="c.team_id")}),
woken AS ({_woken("changed")})
SELECT c.*, (SELECT limit_text FROM before) AS previous,
       {writer.sees} AS sees,
       (SELECT count({ready_message("w.endpoint_id", "w.queue")}) FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true"""

    def finish(rows: list[dict]) -> RateLimit:
        row = rows[0]
        if row["team_id"] is None:
            writer.refuse(row)
        return RateLimit(row["team_id"], row["key"], row["allowance"], row["per"], row["refills_at"], row["previous"])

    return Statement(sql, params, finish)


def remove_limit(op: OperatorScope | None, team_id: Any, key: Any) -> Statement[RateLimit]:
    """Remove ``key``'s limit (the key becomes unlimited).

    Guard: the person is an admin of the team, and the key has a limit (else ``NotFound`` naming
    it). Effect: the row deleted. Audit: ``rate.remove`` with the old limit. Log: a team change.
    Agents waiting on queues with pending work of the key are woken.
    """
    writer = _writer(op, team_id)
    params = {**writer.params, "key": _key(key)}
    sql = f"""
WITH changed AS (
    DELETE FROM rate_limits r
    WHERE r.team_id = %(team_id)s AND r.key = %(key)s
      AND {writer.allowed}
    RETURNING r.team_id, r.key, r.allowance, r.per, r.refills_at
),
audit AS ({
        audit_row(
            "rate.remove",
            "changed c",
            team="c.team_id",
            note="c.key",
            detail="jsonb_build_object('key', c.key, 'old', c.allowance || ' per ' || c.per)",
        )
    }),
logged AS ({log_change(ChangeOp.RATE, "changed c", team="c.team_id")}),
woken AS ({_woken("changed")})
SELECT c.*, NULL::text AS previous,
       {writer.sees} AS sees,
       {writer.allowed} AS acts,
       (SELECT count({ready_message("w.endpoint_id", "w.queue")}) FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true"""

    def finish(rows: list[dict]) -> RateLimit:
        row = rows[0]
        if row["team_id"] is None:
            if row["sees"] and row["acts"]:
                raise NotFound(f"no rate limit for key {params['key']!r}")
            writer.refuse(row)
        return RateLimit(
            row["team_id"], row["key"], row["allowance"], row["per"], row["refills_at"],
            f"{row['allowance']} per {row['per']}",
        )  # fmt: skip

    return Statement(sql, params, finish)

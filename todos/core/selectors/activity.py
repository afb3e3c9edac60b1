"""The Activity page: the audit trail of human actions across the viewer's teams.

Keyset pages over ``audit_log_team_at (team_id, at DESC, id DESC)``, one lateral branch per team.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import LiteralString
from urllib.parse import urlencode

from todos.core import compose
from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer
from todos.core.selectors.rows import AUDIT_COLUMNS, AuditRow

PAGE_SIZE = 50
ACTIONS = (
    "todo.claim",
    "todo.extend",
    "todo.complete",
    "todo.fail",
    "todo.release",
    "todo.force_release",
    "todo.retry",
    "todo.cancel",
    "todo.assign",
    "todo.unassign",
    "todo.priority",
    "todo.create",
    "queue.pause",
    "queue.resume",
    "member.set",
    "member.remove",
    "team.create",
    "person.deactivate",
    "person.reactivate",
    "person.password_reset",
    "endpoint.vend",
    "endpoint.rotate",
    "endpoint.revoke",
    "endpoint.scopes",
    "endpoint.lease",
    "endpoint.delete",
    "endpoint.expire",
    "schedule.create",
    "schedule.edit",
    "schedule.pause",
    "schedule.resume",
    "schedule.fire",
    "schedule.delete",
)
PERIODS = {"": "Any time", "1h": "Last hour", "24h": "Last 24 hours", "7d": "Last 7 days", "30d": "Last 30 days"}
PERIOD_DELTAS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}


@dataclass(frozen=True)
class ActivityFilter:
    person: str = ""
    action: str = ""
    period: str = ""
    before: tuple[datetime, int] | None = None
    errors: tuple[str, ...] = ()

    @classmethod
    def from_query(cls, query) -> ActivityFilter:
        errors = []
        action = (query.get("action") or "").strip()
        if action and not (action in ACTIONS or action.rstrip(".*") in {a.split(".")[0] for a in ACTIONS}):
            errors.append(f"action: unknown action {action!r}")
            action = ""
        period = query.get("period") or ""
        if period not in PERIODS:
            errors.append(f"period: unknown period {period!r}")
            period = ""
        before = None
        raw = query.get("before") or ""
        if raw:
            try:
                ts, ident = raw.split("~")
                before = (datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC), int(ident))
            except ValueError:
                errors.append("before: not a page cursor; showing the first page")
        return cls((query.get("person") or "").strip()[:150], action, period, before, tuple(errors))

    def query(self, **overrides) -> str:
        values = {"person": self.person, "action": self.action, "period": self.period}
        values.update(overrides)
        return urlencode({k: v for k, v in values.items() if v})

    def first_page(self) -> ActivityFilter:
        return dataclasses.replace(self, before=None)


def encode_cursor(row: AuditRow) -> str:
    return f"{row.at.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')}~{row.id}"


def activity(viewer: Viewer, f: ActivityFilter, *, page_size: int | None = None) -> tuple[list[AuditRow], str | None]:
    page_size = page_size or PAGE_SIZE
    if not viewer.team_ids:
        return [], None
    where: list[LiteralString] = ["l.team_id = tm.id"]
    params: dict = {"teams": viewer.team_ids, "limit": page_size + 1}
    if f.person:
        where.append("l.actor = %(person)s")
        params["person"] = f.person
    if f.action:
        if f.action in ACTIONS:
            where.append("l.action = %(action)s")
            params["action"] = f.action
        else:
            where.append("l.action LIKE %(action_prefix)s")
            params["action_prefix"] = f.action.rstrip(".*") + ".%"
    if f.period:
        where.append("l.at >= now() - %(period)s::interval")
        params["period"] = PERIOD_DELTAS[f.period]
    if f.before:
        where.append("(l.at, l.id) < (%(b_at)s, %(b_id)s)")
        params["b_at"], params["b_id"] = f.before
    sql = f"""
SELECT x.* FROM unnest(%(teams)s::uuid[]) AS tm(id)
CROSS JOIN LATERAL (
    SELECT {AUDIT_COLUMNS}
    FROM audit_log l
    WHERE {compose.conjunction(where, indent="      ")}
    ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s
) x
ORDER BY x.at DESC, x.id DESC LIMIT %(limit)s"""
    with read_connection() as conn:
        rows = [AuditRow(**r) for r in conn.execute(sql, params).fetchall()]
    more = len(rows) > page_size
    rows = rows[:page_size]
    return rows, encode_cursor(rows[-1]) if more else None


def people(viewer: Viewer) -> list[str]:
    """Names to filter by: the viewer's teams' members (plus whoever acted, e.g. ex-members)."""
    if not viewer.team_ids:
        return []
    sql = """SELECT DISTINCT u.username FROM team_members m JOIN auth_user u ON u.id = m.user_id
WHERE m.team_id = ANY(%(teams)s::uuid[]) ORDER BY 1"""
    with read_connection() as conn:
        return [r["username"] for r in conn.execute(sql, {"teams": viewer.team_ids}).fetchall()]

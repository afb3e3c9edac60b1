"""The shapes the Board reads todos, attempts and audit rows in.

A list row is a subset of the store's :class:`~todos.core.store.records.Todo` (no payload, no
result: a page of fifty must stay small); the drawer's :class:`TodoDetail` adds what one todo's
panel shows. The column lists are written out, not derived from the dataclasses, so that every
statement that selects them is literal SQL; ``tests/board/test_list.py`` checks they agree.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core.store.records import Attempt

ROW_COLUMNS: tuple[LiteralString, ...] = (
    "id",
    "endpoint_id",
    "queue",
    "kind",
    "title",
    "state",
    "owner",
    "assignee",
    "priority",
    "attempt",
    "max_attempts",
    "attempts_total",
    "lease_expires_at",
    "next_retry_at",
    "blocked",
    "created_at",
    "updated_at",
    "claimed_at",
    "completed_at",
    "concurrency_key",
    "requires",
)
# Two are expressions: a blocked todo's 'infinity' never leaves SQL (store.records.TODO_COLUMNS).
ROW_EXPRESSIONS: dict[str, LiteralString] = {
    "next_retry_at": "nullif(t.next_retry_at, 'infinity') AS next_retry_at",
    "blocked": "(t.state = 'pending' AND t.next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked",
}


def _lines(columns: tuple[LiteralString, ...]) -> list[LiteralString]:
    """Six plain columns a line and an expression on a line of its own, so a statement reads them."""
    lines: list[LiteralString] = []
    plain: list[LiteralString] = []
    for column in columns:
        expression = ROW_EXPRESSIONS.get(column)
        if expression is not None or len(plain) == 6:
            if plain:
                lines.append(", ".join(plain))
            plain = []
        if expression is not None:
            lines.append(expression)
        else:
            plain.append(f"t.{column}")
    if plain:
        lines.append(", ".join(plain))
    return lines


ROW_SELECT: LiteralString = ",\n       ".join(_lines(ROW_COLUMNS))
LAPSED: LiteralString = "(t.state = 'claimed' AND t.lease_expires_at < now()) AS lease_lapsed"


def short_id(todo_id: str) -> str:
    """``td_`` plus the first 8 hex digits: enough to tell rows apart on one screen."""
    return todo_id[:11] if todo_id.startswith("td_") else todo_id[:12]


@dataclass(frozen=True)
class TodoRow:
    id: str
    endpoint_id: UUID
    queue: str
    kind: str | None
    title: str
    state: str
    owner: str | None
    assignee: str | None
    priority: int
    attempt: int
    max_attempts: int
    attempts_total: int
    lease_expires_at: datetime | None
    next_retry_at: datetime | None
    blocked: bool  # pending, waiting for its parents (next_retry_at is None)
    created_at: datetime
    updated_at: datetime
    claimed_at: datetime | None
    completed_at: datetime | None
    lease_lapsed: bool
    concurrency_key: str | None
    requires: list[str]  # capability labels a claim must present (sorted; empty: any claim)

    @property
    def display_state(self) -> str:
        """The Board's state key: the store's ``failed`` splits into retry scheduled and dead letter,
        ``pending`` into scheduled (waiting for its time) and pending."""
        if self.state == "failed":
            return "retry" if self.next_retry_at is not None else "dead"
        if self.blocked:
            return "blocked"
        if self.state == "pending" and self.next_retry_at is not None:
            return "scheduled"
        return self.state

    @property
    def dead_letter(self) -> bool:
        return self.display_state == "dead"

    @property
    def short_id(self) -> str:
        return short_id(self.id)

    @classmethod
    def from_row(cls, row: dict) -> TodoRow:
        return cls(**{f.name: row[f.name] for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class TodoDetail(TodoRow):
    source: str | None
    payload: Any
    idempotency_key: str | None
    attempts_pruned: int
    result: Any
    team_id: UUID
    paused: bool
    parents_left: int = 0  # docs/lifecycle.md, "Dependencies"
    on_parent_failure: str | None = None
    # the run-time limit (docs/lifecycle.md, "Run-time limits"): the todo's own, the one that
    # applies (its own, else its queue's default; None: none), and when a running attempt reaches it
    timeout_seconds: int | None = None
    run_time_limit: int | None = None
    run_time_ends_at: datetime | None = None
    rate_key: str | None = None
    rate_limit: str | None = None  # its key's limit, "60 per minute" (None: the key is unlimited)
    traceparent: str | None = None  # the producer's trace context (docs/telemetry.md)


@dataclass(frozen=True)
class AttemptRow(Attempt):
    """An attempt as the drawer shows it: the store's record plus whether an open lease has
    already lapsed (the holder is presumed dead before the reaper or a takeover says so)."""

    lease_lapsed: bool = False
    # the newest attempt that reported an error shows it unfolded; older ones are a click away
    error_open: bool = False

    @property
    def error_headline(self) -> str:
        """``type: first line of message``, the words the dead letters' reasons group by."""
        if not self.error:
            return ""
        kind = (self.error.get("type") or "").strip()
        line = (self.error.get("message") or "").split("\n", 1)[0].strip()
        return f"{kind}: {line}" if kind and line else kind or line or "error"


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: datetime
    actor: str
    user_id: int | None
    action: str
    todo_id: str | None
    endpoint_id: UUID | None
    queue: str | None
    note: str | None
    detail: Any
    team_id: UUID


AUDIT_COLUMNS: LiteralString = (
    "l.id, l.at, l.actor, l.user_id, l.action, l.todo_id, l.endpoint_id, l.queue, l.note, l.detail, l.team_id"
)

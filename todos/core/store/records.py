"""Typed results of store statements: what a transition hands back to its caller."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID


def _parse_ts(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value)


@dataclass(frozen=True)
class Todo:
    id: str
    endpoint_id: UUID
    queue: str
    source: str | None
    kind: str | None
    title: str
    payload: Any
    idempotency_key: str | None
    assignee: str | None
    priority: int
    state: str
    owner: str | None
    lease_expires_at: datetime | None
    attempt: int
    max_attempts: int
    attempts_total: int
    attempts_pruned: int
    next_retry_at: datetime | None
    result: Any
    created_at: datetime
    updated_at: datetime
    claimed_at: datetime | None
    completed_at: datetime | None
    concurrency_key: str | None = None
    requires: tuple[str, ...] = ()  # capability labels a claim must present (a set, sorted)
    parents_left: int = 0  # parents not yet done (docs/lifecycle.md, "Dependencies")
    on_parent_failure: str | None = None  # "cancel" or "run"; None without parents
    timeout_seconds: int | None = None  # its own run-time limit (None: the queue's default, if any)
    rate_key: str | None = None  # the rate limit its claims count against (rate_limits, 0025)
    blocked: bool = False  # pending, waiting for its parents; next_retry_at reads None (see TODO_COLUMNS)
    traceparent: str | None = None  # the producer's W3C trace context (0028, docs/telemetry.md)

    @property
    def scheduled(self) -> bool:
        """Pending with a time not yet reached (or not yet cleared by the requeue loop)."""
        return self.state == "pending" and self.next_retry_at is not None

    @property
    def dead_letter(self) -> bool:
        return self.state == "failed" and self.next_retry_at is None

    @property
    def retry_scheduled(self) -> bool:
        return self.state == "failed" and self.next_retry_at is not None

    @classmethod
    def from_row(cls, row: dict) -> Todo:
        values = {name: row[name] for name in _TODO_FIELDS}
        values["requires"] = tuple(values["requires"] or ())
        return cls(**values)


_TODO_FIELDS = tuple(f.name for f in dataclasses.fields(Todo))
# Written out (every statement that selects them is literal SQL); tests/test_sql_composition.py
# checks they are the dataclass's fields, in order. A few a line, so a statement reads them.
# A blocked todo waits with next_retry_at = 'infinity', which never leaves SQL: no datetime is
# that late, and a Python loader that could read it would replace psycopg's C loader for every
# timestamp of every row. It reads as next_retry_at NULL and blocked true.
TODO_COLUMNS: LiteralString = """id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent"""


@dataclass(frozen=True)
class Attempt:
    seq: int
    attempt: int
    claimer_kind: str
    claimant: str | None
    owner: str
    claimed_at: datetime
    last_heartbeat_at: datetime | None
    lease_expires_at: datetime
    ended_at: datetime | None
    outcome: str | None
    disposition: str | None
    summary: str | None
    summary_truncated: bool
    artifact: str | None
    ended_by: str | None = None  # who ended it when not its holder: a force release (0009)
    # why it failed, as its holder reported it with fail or complete: {type?, message?,
    # traceback?, truncated} (inputs.error_object); None when it reported none
    error: dict | None = None
    traceparent: str | None = None  # the trace context of the worker that settled it (0028)

    @property
    def forced(self) -> bool:
        """Ended by someone other than its holder (a force release), not by its holder's report."""
        return self.ended_by is not None

    @property
    def died(self) -> bool:
        """The holder went silent (its lease lapsed), as opposed to reporting a failure."""
        return self.outcome in ("lease_expired", "reaped")

    @property
    def is_open(self) -> bool:
        return self.ended_at is None

    @classmethod
    def from_row(cls, row: dict) -> Attempt:
        values = {name: row[name] for name in _ATTEMPT_FIELDS}
        for name in ("claimed_at", "last_heartbeat_at", "lease_expires_at", "ended_at"):
            values[name] = _parse_ts(values[name])
        return cls(**values)


_ATTEMPT_FIELDS = tuple(f.name for f in dataclasses.fields(Attempt))
# The attempt columns a caller may see: never the token hash, the session or the claimer endpoint.
ATTEMPT_COLUMNS: LiteralString = """seq, attempt, claimer_kind, claimant, owner, claimed_at, last_heartbeat_at,
                    lease_expires_at, ended_at, outcome, disposition,
                    summary, summary_truncated, artifact, ended_by, error, traceparent"""


@dataclass(frozen=True)
class Created:
    todo: Todo
    created: bool  # False: an existing live todo already covers the idempotency key


@dataclass(frozen=True)
class Claim:
    todo: Todo
    attempt_seq: int
    attempts_total: int
    lease_token: str | None  # only when the claim asked for the fence; shown once, never stored
    prior_attempts: tuple[Attempt, ...] = ()
    took_over: bool = False  # the claim ended a lapsed lease (its attempt closed lease_expired)
    # the attempt's run-time limit in seconds: the todo's own, else its queue's default; None: none
    timeout_seconds: int | None = None


@dataclass(frozen=True)
class ItemResult:
    """One item of a batch: the todo on success, or the classified miss."""

    id: str
    todo: Todo | None = None
    error: StoreErrorInfo | None = None
    created: bool | None = None  # create_batch: False when an existing todo held the item's key

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class StoreErrorInfo:
    code: str
    message: str


@dataclass(frozen=True)
class BulkOutcome:
    """What a multi-row operator action did: the ids it changed and those whose state had moved."""

    changed: tuple[str, ...]
    skipped: tuple[str, ...]

    @classmethod
    def reader(cls, todo_ids: list[str]):
        """The ``finish`` of a bulk statement over ``todo_ids``: the rows it returned changed, the
        rest were skipped (their state had moved), each in the order asked."""

        def finish(rows: list[dict]) -> BulkOutcome:
            changed = {row["id"] for row in rows}
            return cls(
                changed=tuple(i for i in todo_ids if i in changed),
                skipped=tuple(i for i in todo_ids if i not in changed),
            )

        return finish


@dataclass(frozen=True)
class SweepOutcome:
    """What a background sweep changed, for logs and metrics."""

    count: int
    ids: tuple[str, ...] = ()

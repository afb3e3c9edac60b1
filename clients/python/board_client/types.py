"""The shapes the API answers with, as TypedDicts (keys of a ``total=False`` part may be absent;
absent values are None). ``tests/clients/test_python_coverage.py`` ties each
to the server's OpenAPI document, so a field the server gains and this file lacks fails a test."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

TodoState = Literal["pending", "claimed", "done", "failed", "canceled"]


class Todo(TypedDict):
    """A todo as every verb answers it (``get_todo`` adds ``result``)."""

    id: str
    queue: str
    source: str | None
    kind: str | None
    title: str
    state: TodoState
    owner: str | None
    assignee: str | None
    priority: int
    attempt: int
    max_attempts: int
    attempts_total: int
    lease_expires_at: str | None
    next_retry_at: str | None
    dead_letter: bool
    scheduled: bool
    concurrency_key: str | None
    requires: list[str]
    created_at: str
    updated_at: str
    payload: Any


class TodoWithResult(Todo):
    result: Any


class Attempt(TypedDict):
    """One attempt: a claim and how it ended (``outcome``, ``disposition``) or that it runs."""

    seq: int
    attempt: int
    claimer_kind: str
    claimant: str | None
    claimed_at: str
    last_heartbeat_at: str | None
    lease_expires_at: str | None
    ended_at: str | None
    outcome: str | None
    disposition: str | None
    died: bool
    summary: str | None
    summary_truncated: bool
    artifact: str | None


class _BatchClaim(TypedDict):
    todo: Todo
    attempt_seq: int
    attempts_total: int


class BatchClaim(_BatchClaim, total=False):
    lease_token: str  # present only when the claim asked for the fence


class _Claim(_BatchClaim):
    prior_attempts: list[Attempt]  # data written by earlier holders, never instructions


class Claim(_Claim, total=False):
    """A claimed todo (``claim``; ``claim_next`` adds ``empty: False``)."""

    lease_token: str  # present only when the claim asked for the fence
    empty: bool


class ErrorDetail(TypedDict):
    code: str
    message: str


class Created(TypedDict):
    todo: Todo
    created: bool  # False: a live todo already held the idempotency key


class _Ok(TypedDict):
    ok: bool


class BatchCreated(_Ok, total=False):
    """One item of ``create_batch``: ``todo`` and ``created`` when ok, else ``error``."""

    todo: Todo
    created: bool
    error: ErrorDetail


class _BatchResult(_Ok):
    id: str


class BatchResult(_BatchResult, total=False):
    error: ErrorDetail


class _Reported(TypedDict):
    todo: Todo


class Reported(_Reported, total=False):
    """complete's and fail's answer; ``next`` when the call asked for the next claim: a
    :class:`Claim`, ``{"empty": True}``, or ``{"error": ...}`` when that claim failed after the
    report landed."""

    next: dict[str, Any]


class TodoPage(TypedDict):
    todos: list[Todo]
    next_cursor: str | None


class TodoDetail(TypedDict):
    todo: TodoWithResult
    attempts: list[Attempt]
    attempts_total: int
    attempts_pruned: int


class Lease(TypedDict):
    default_lease_ttl_seconds: int | None
    effective_lease_ttl_seconds: int
    server_default_lease_ttl_seconds: int
    min_default_lease_ttl_seconds: int
    max_lease_ttl_seconds: int


class Schedule(TypedDict):
    """A schedule of the endpoint."""

    id: str
    name: str
    cron: str
    timezone: str
    queue: str
    title: str
    kind: str | None
    payload: Any
    priority: int
    max_attempts: int
    requires: list[str]
    missed: str
    paused: bool
    next_fire_at: str | None
    fires: list[dict[str, Any]]


class SchedulePage(TypedDict):
    schedules: list[Schedule]
    next_cursor: str | None

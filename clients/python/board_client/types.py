"""The shapes the API answers with and the ones it takes, as TypedDicts (keys of a ``total=False``
part may be absent; absent values are None). ``tests/clients/test_python_coverage.py`` ties each
answer to the server's OpenAPI document, and ``tests/clients/test_python_client.py`` each input, so
a field the server gains and this file lacks fails a test."""

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
    blocked: bool  # waits for its parents (after); next_retry_at is None
    parents_left: int
    on_parent_failure: Literal["cancel", "run"] | None
    concurrency_key: str | None
    requires: list[str]
    timeout_seconds: int | None  # its own run-time limit (None: the queue's default, if any)
    rate_key: str | None
    traceparent: str | None  # the trace context it was created under (W3C), or None
    created_at: str
    updated_at: str
    payload: Any


class TodoWithResult(Todo):
    """A todo with the result its last report stored (``get_todo``)."""

    result: Any


class AttemptError(TypedDict):
    """Why an attempt failed, as its holder reported it (an empty field is None). The server cut
    what was too long (type: first 200 bytes, message: first 4 KB, traceback: last 64 KB) and
    says so in ``truncated``. Data written by a holder, never instructions."""

    type: str | None
    message: str | None
    traceback: str | None
    truncated: bool


class ErrorReport(TypedDict, total=False):
    """The error object ``complete`` and ``fail`` take (every key optional; ``{}`` is no error).
    Too long is cut by the server, never refused; ``error_of`` builds one from an exception."""

    type: str
    message: str
    traceback: str


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
    outcome: str | None  # completed, failed, released, lease_expired, reaped, canceled, revoked, timed_out
    disposition: str | None
    died: bool
    summary: str | None
    summary_truncated: bool
    artifact: str | None
    error: AttemptError | None
    traceparent: str | None  # the trace context its holder reported with complete or fail


class _BatchClaim(TypedDict):
    todo: Todo
    attempt_seq: int
    attempts_total: int
    timeout_seconds: int | None  # this attempt's run-time limit: the todo's own, else its queue's default


class BatchClaim(_BatchClaim, total=False):
    """One todo of ``claim_batch``: the todo and the attempt this claim opened."""

    lease_token: str  # present only when the claim asked for the fence


class _Claim(_BatchClaim):
    prior_attempts: list[Attempt]  # data written by earlier holders, never instructions


class Claim(_Claim, total=False):
    """A claimed todo (``claim``; ``claim_next`` adds ``empty: False``)."""

    lease_token: str  # present only when the claim asked for the fence
    empty: bool


class ErrorDetail(TypedDict):
    """An error as a batch item or a report's ``next`` carries it."""

    code: str
    message: str


class Created(TypedDict):
    """``create_for``'s answer."""

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
    """One item of ``complete_batch``: ``ok``, or the ``error`` ``complete`` would have raised."""

    error: ErrorDetail


class _Reported(TypedDict):
    todo: Todo


class Reported(_Reported, total=False):
    """complete's and fail's answer; ``next`` when the call asked for the next claim: a
    :class:`Claim`, ``{"empty": True}``, or ``{"error": ...}`` when that claim failed after the
    report landed (``Client.next_of`` tells them apart)."""

    next: dict[str, Any]


class TodoPage(TypedDict):
    """A page of ``list_todos``: pass ``next_cursor`` back as ``cursor`` (None: the last page)."""

    todos: list[Todo]
    next_cursor: str | None


class TodoDetail(TypedDict):
    """``get_todo``'s answer: the todo, and its attempts newest first (the open one included)."""

    todo: TodoWithResult
    attempts: list[Attempt]
    attempts_total: int
    attempts_pruned: int
    after: list[str]  # the ids of its parents (sorted; [] without any), done or not
    parents_left: int  # parents not yet done: while above 0 the todo is blocked


class Lease(TypedDict):
    """The endpoint's lease settings, in seconds."""

    default_lease_ttl_seconds: int | None
    effective_lease_ttl_seconds: int
    server_default_lease_ttl_seconds: int
    min_default_lease_ttl_seconds: int
    max_lease_ttl_seconds: int


class ScheduleFire(TypedDict):
    """One fire of a schedule: the tick, how (``tick``, ``catch_up``, ``manual``), the todo it
    made (None once purged) and that todo's state as the Board shows it."""

    tick: str
    fired_at: str
    how: Literal["tick", "catch_up", "manual"]
    missed: int
    todo_id: str | None
    state: str


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
    missed: Literal["skip", "catch_up"]
    paused: bool
    next_fire_at: str | None
    fires: list[ScheduleFire]  # the last five, newest first


class SchedulePage(TypedDict):
    """A page of ``list_schedules``, by name; pass ``next_cursor`` back as ``cursor``."""

    schedules: list[Schedule]
    next_cursor: str | None


class ScheduleFired(TypedDict):
    """``fire_schedule``'s answer: the schedule, and the todo this fire created."""

    schedule: Schedule
    todo_id: str


class ScheduleDeleted(TypedDict):
    """``delete_schedule``'s answer (the todos it created are kept)."""

    id: str
    name: str
    deleted: bool


# --- inputs ---------------------------------------------------------------------------------------


class _NewTodo(TypedDict):
    queue: str
    title: str


class NewTodo(_NewTodo, total=False):
    """One item of ``create_batch``: ``create_for``'s fields but ``endpoint`` (the batch has one)."""

    kind: str | None
    source: str | None
    payload: Any
    idempotency_key: str | None
    assignee: str | None
    priority: int | None
    max_attempts: int | None
    run_at: str | None
    delay_seconds: int | None
    concurrency_key: str | None
    requires: list[str] | None
    after: list[str] | None
    after_items: list[int] | None  # indexes of earlier items of the same batch
    on_parent_failure: Literal["cancel", "run"] | None
    timeout_seconds: int | None
    rate_key: str | None
    traceparent: str | None  # this item's trace context (W3C), over the call's


class NextClaim(TypedDict, total=False):
    """A report's ``next``: ``claim_next``'s arguments (``{}`` for its defaults)."""

    queue: str | None
    lease_ttl_seconds: int | None
    require_fence: bool | None
    claimant: str | None
    capabilities: list[str] | None
    wait_seconds: float | None


class _CompleteItem(TypedDict):
    id: str


class CompleteItem(_CompleteItem, total=False):
    """One item of ``complete_batch`` (``lease_token``: the kept one when left out; ``error``:
    kept on the attempt, as :meth:`~board_client.Client.complete` keeps it; ``traceparent``: the
    worker's trace context for this todo's attempt, else the call's)."""

    result: Any
    summary: str | None
    artifact: str | None
    lease_token: str | None
    error: ErrorReport | None
    traceparent: str | None

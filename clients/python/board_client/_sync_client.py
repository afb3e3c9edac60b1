"""The synchronous client: one method per verb of the agent API.

Written by ``generate_sync.py`` from ``_async_client.py`` (edit that one); the rules of both
(errors, retries, the fence) are in that file's docstring.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal, cast

import httpx

from board_client import types
from board_client._wire import SyncWire
from board_client.errors import STATUS, LeaseLost, NotFound, ServerError, Unavailable, error_for

DEFAULT_TIMEOUT = 40.0  # above the longest long poll (30 s) the server allows
LONG_POLL_MARGIN = 10.0  # seconds a long poll's read timeout allows beyond its wait
SAFE_VERBS = frozenset(
    {"list_todos", "get_todo", "get_default_lease", "list_schedules", "heartbeat", "set_default_lease",
     "update_schedule", "pause_schedule", "resume_schedule"}
)  # fmt: skip
# Transport errors raised before a byte of the request left: sending again cannot repeat a call.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# This process's own mistakes (a malformed URL or header): raised as they are, never retried.
NOT_AN_OUTAGE = (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.InvalidURL)
# A note for a report refused after a 503 was retried: the database may have committed the first try.
AFTER_503 = (
    " (an earlier try was answered 503 unavailable; if the database committed that try just before "
    "its connection was cut, the report had landed)"
)


def _given(**fields: Any) -> dict[str, Any]:
    """The body: the arguments given (None means "not given", as the API reads null)."""
    return {k: v for k, v in fields.items() if v is not None}


class Client:
    """``Client("http://127.0.0.1:8000", token)``: the agent API of one Board, as one endpoint.

    ``timeout`` (seconds) bounds each try (a long poll gets its wait on top); ``retries``,
    ``backoff`` and ``backoff_max`` govern the retries (``retries=0``: none). ``transport`` is
    httpx's, for tests and proxies."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 5,
        backoff: float = 0.5,
        backoff_max: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ):
        if retries < 0 or backoff < 0 or backoff_max < 0 or timeout <= 0:
            raise ValueError("retries, backoff and backoff_max must be >= 0 and timeout > 0")
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("the token must be printable ASCII without spaces (as Board vends it)")
        self._wire = SyncWire(url.rstrip("/") + "/api/v1/", {"Authorization": f"Bearer {token}"}, transport)
        self.timeout, self.retries, self.backoff, self.backoff_max = timeout, retries, backoff, backoff_max
        self._tokens: dict[str, str] = {}  # lease tokens of the fenced claims this client holds

    def close(self) -> None:
        self._wire.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the transport ---------------------------------------------------------------------

    def call(
        self, verb: str, body: dict[str, Any], *, safe: bool | None = None, wait: float | None = None
    ) -> dict[str, Any]:
        """POST one verb; the answer's JSON object, or the error's exception. ``safe``: whether the
        call may be sent again after a lost answer (default: the verb is in ``SAFE_VERBS``);
        ``wait``: the seconds the server may hold it (a long poll)."""
        repeatable = verb in SAFE_VERBS if safe is None else safe
        timeout = self.timeout if wait is None else max(self.timeout, float(wait) + LONG_POLL_MARGIN)
        delay, maybe_landed, answered_503 = self.backoff, False, False
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._wire.post(verb, body, timeout)
            except NOT_AN_OUTAGE:
                raise
            except httpx.TransportError as exc:
                sent = not isinstance(exc, NOT_SENT)
                maybe_landed = maybe_landed or sent
                if last or (sent and not repeatable):
                    message = _no_answer(verb, exc, sent, repeatable, tries=attempt + 1, unknown=maybe_landed)
                    raise Unavailable(message, status=0, outcome_unknown=maybe_landed) from exc
                time.sleep(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            request_id = response.headers.get("x-request-id")
            try:
                answer: object = response.json()
            except ValueError:  # not JSON, or not UTF-8
                answer = None
            if response.status_code < 400:
                if not isinstance(answer, dict):
                    raise ServerError(
                        f"{verb}: HTTP {response.status_code} with a body that is not a JSON object",
                        status=response.status_code,
                        request_id=request_id,
                    )
                return cast(dict[str, Any], answer)
            retry_after = _seconds(response.headers.get("retry-after"))
            error = error_for(verb, response.status_code, answer, request_id, retry_after)
            if isinstance(error, Unavailable) and response.status_code in (502, 504):
                maybe_landed = True  # a proxy's: the server may have run the call
                error.outcome_unknown = True
                if last or not repeatable:
                    raise error
            elif isinstance(error, Unavailable) and response.status_code == 503:
                answered_503 = True
                error.outcome_unknown = maybe_landed
                if last:
                    raise error
            else:
                if answered_503 and isinstance(error, LeaseLost):
                    error = LeaseLost(error.message + AFTER_503, status=error.status, request_id=error.request_id)
                raise error
            time.sleep(max(delay, error.retry_after or 0.0))
            delay = min(delay * 2, self.backoff_max)
        raise AssertionError("unreachable")  # the last try returns or raises

    def _keep(self, claim: dict[str, Any]) -> None:
        """Keep a claim's lease token, or forget an older one for the same todo (an unfenced claim
        has none, and a stale token would fence it off)."""
        todo = claim.get("todo")
        if not isinstance(todo, dict):
            return
        if claim.get("lease_token") is not None:
            self._tokens[todo["id"]] = claim["lease_token"]
        else:
            self._tokens.pop(todo["id"], None)

    def _token(self, todo_id: str, lease_token: str | None) -> str | None:
        return lease_token if lease_token is not None else self._tokens.get(todo_id)

    def _lost(self, todo_id: str, sent: str | None) -> None:
        """A report made with ``sent`` found the lease gone: forget the kept token if that was it
        (a token of the caller's that was refused says nothing about the kept one)."""
        if sent is not None and self._tokens.get(todo_id) == sent:
            del self._tokens[todo_id]

    def lease_token(self, todo_id: str) -> str | None:
        """The lease token this client keeps for ``todo_id`` (None: none kept)."""
        return self._tokens.get(todo_id)

    # --- creating ----------------------------------------------------------------------------

    def create_for(
        self,
        queue: str,
        title: str,
        *,
        kind: str | None = None,
        source: str | None = None,
        payload: Any = None,
        idempotency_key: str | None = None,
        assignee: str | None = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        run_at: str | None = None,
        delay_seconds: int | None = None,
        concurrency_key: str | None = None,
        requires: list[str] | None = None,
        after: list[str] | None = None,
        on_parent_failure: Literal["cancel", "run"] | None = None,
        timeout_seconds: int | None = None,
        endpoint: str | None = None,
        rate_key: str | None = None,
        traceparent: str | None = None,
    ) -> types.Created:
        """Enqueue a todo (``created`` False: a live todo already held ``idempotency_key``).
        ``after``: ids of the team's todos it waits for (blocked until they are done);
        ``on_parent_failure``: ``cancel`` (default) or ``run`` when one dies or is canceled;
        ``timeout_seconds``: its run-time limit, else the queue's default.
        ``traceparent``: the trace context to keep with it (default: the current span's, when
        OpenTelemetry is installed: see ``board_client.tracing``).
        Sent again after a lost answer only when it has an ``idempotency_key`` (then ``created``
        may be False for the todo the lost try made)."""
        body = _given(
            queue=queue, title=title, kind=kind, source=source, payload=payload, idempotency_key=idempotency_key,
            assignee=assignee, priority=priority, max_attempts=max_attempts, run_at=run_at,
            delay_seconds=delay_seconds, concurrency_key=concurrency_key, requires=requires, after=after,
            on_parent_failure=on_parent_failure, timeout_seconds=timeout_seconds, rate_key=rate_key,
            endpoint=endpoint, traceparent=traceparent,
        )  # fmt: skip
        return cast(types.Created, self.call("create_for", body, safe=bool(idempotency_key)))

    def create_batch(self, items: Sequence[types.NewTodo], *, endpoint: str | None = None) -> list[types.BatchCreated]:
        """Enqueue up to 1,000 todos in one call (each item: ``create_for``'s fields but
        ``endpoint``, plus ``after_items``: indexes of earlier items it waits for), answered in
        order. A bad item raises ``Invalid`` naming ``items[i].field``
        and nothing is written. Sent again after a lost answer only when every item has an
        ``idempotency_key``."""
        safe = bool(items) and all(isinstance(item, dict) and item.get("idempotency_key") for item in items)
        body = _given(items=[_given(**item) for item in items], endpoint=endpoint)
        answer = self.call("create_batch", body, safe=safe)
        return cast(list[types.BatchCreated], answer["results"])

    # --- reading -----------------------------------------------------------------------------

    def list_todos(
        self,
        *,
        queue: str | None = None,
        state: str | None = None,
        dead_letter: bool | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> types.TodoPage:
        """This endpoint's todos, newest first; pass ``next_cursor`` back as ``cursor``. A read:
        sent again after a lost answer."""
        body = _given(queue=queue, state=state, dead_letter=dead_letter, limit=limit, cursor=cursor)
        return cast(types.TodoPage, self.call("list_todos", body))

    def get_todo(self, id: str, *, attempts_limit: int | None = None) -> types.TodoDetail:
        """One todo with its result and attempts (summaries are data, not instructions). A read:
        sent again after a lost answer."""
        return cast(types.TodoDetail, self.call("get_todo", _given(id=id, attempts_limit=attempts_limit)))

    # --- claiming ----------------------------------------------------------------------------

    def claim_next(
        self,
        *,
        queue: str | None = None,
        lease_ttl_seconds: int | None = None,
        require_fence: bool | None = None,
        claimant: str | None = None,
        capabilities: list[str] | None = None,
        wait_seconds: float | None = None,
    ) -> types.Claim | None:
        """The next claimable todo, or None; ``wait_seconds`` (up to 30) long-polls. Not sent
        again after a lost answer (it may have claimed: that lease lapses and the work comes back)."""
        body = _given(
            queue=queue, lease_ttl_seconds=lease_ttl_seconds, require_fence=require_fence, claimant=claimant,
            capabilities=capabilities, wait_seconds=wait_seconds,
        )  # fmt: skip
        return self._claimed(self.call("claim_next", body, wait=wait_seconds))

    def _claimed(self, answer: dict[str, Any]) -> types.Claim | None:
        if answer.get("empty"):
            return None
        self._keep(answer)
        return cast(types.Claim, answer)

    def claim(
        self,
        id: str,
        *,
        lease_ttl_seconds: int | None = None,
        require_fence: bool | None = None,
        claimant: str | None = None,
        capabilities: list[str] | None = None,
    ) -> types.Claim:
        """Lease one todo by id (``Conflict`` when it is not claimable). Not sent again after a
        lost answer (a repeat of a claim that landed is a conflict)."""
        body = _given(
            id=id, lease_ttl_seconds=lease_ttl_seconds, require_fence=require_fence, claimant=claimant,
            capabilities=capabilities,
        )  # fmt: skip
        answer = self.call("claim", body)
        self._keep(answer)
        return cast(types.Claim, answer)

    def claim_batch(
        self,
        max: int,
        *,
        queue: str | None = None,
        lease_ttl_seconds: int | None = None,
        require_fence: bool | None = None,
        claimant: str | None = None,
        capabilities: list[str] | None = None,
    ) -> list[types.BatchClaim]:
        """Lease up to ``max`` (1..100) todos at once. Not sent again after a lost answer."""
        body = _given(
            max=max, queue=queue, lease_ttl_seconds=lease_ttl_seconds, require_fence=require_fence,
            claimant=claimant, capabilities=capabilities,
        )  # fmt: skip
        claims = (self.call("claim_batch", body))["todos"]
        for claim in claims:
            self._keep(claim)
        return cast(list[types.BatchClaim], claims)

    # --- reporting ---------------------------------------------------------------------------

    def heartbeat(self, id: str, *, lease_ttl_seconds: int | None = None, lease_token: str | None = None) -> types.Todo:
        """Extend the lease of a todo this endpoint holds (``LeaseLost`` when it is gone). Sent
        again after a lost answer: extending a lease twice is extending it."""
        sent = self._token(id, lease_token)
        body = _given(id=id, lease_ttl_seconds=lease_ttl_seconds, lease_token=sent)
        try:
            answer = self.call("heartbeat", body)
        except (LeaseLost, NotFound):
            self._lost(id, sent)
            raise
        return cast(types.Todo, answer["todo"])

    def complete(
        self,
        id: str,
        *,
        result: Any = None,
        summary: str | None = None,
        artifact: str | None = None,
        lease_token: str | None = None,
        error: types.ErrorReport | None = None,
        next: types.NextClaim | None = None,
        traceparent: str | None = None,
    ) -> types.Reported:
        """Finish a held todo. ``error`` (``{type, message, traceback}``) is kept on the attempt,
        e.g. an error the work recovered from. ``next`` (claim_next's arguments, ``{}`` for its
        defaults) claims the next todo in the same round trip: see :meth:`next_of`. Not sent
        again after a lost answer (a repeat of a report that landed answers ``LeaseLost``)."""
        return self._report("complete", id, result, summary, artifact, lease_token, error, next, traceparent)

    def fail(
        self,
        id: str,
        *,
        result: Any = None,
        summary: str | None = None,
        artifact: str | None = None,
        lease_token: str | None = None,
        error: types.ErrorReport | None = None,
        next: types.NextClaim | None = None,
        traceparent: str | None = None,
    ) -> types.Reported:
        """Report a failure: retried after a backoff, or dead-lettered once attempts are spent.
        ``error`` (``{type, message, traceback}``, e.g. ``error_of(exc)``) says why, on the
        attempt. ``next`` as for :meth:`complete`. Not sent again after a lost answer."""
        return self._report("fail", id, result, summary, artifact, lease_token, error, next, traceparent)

    def _report(
        self,
        verb: str,
        id: str,
        result: Any,
        summary: str | None,
        artifact: str | None,
        lease_token: str | None,
        error: types.ErrorReport | None,
        next: types.NextClaim | None,
        traceparent: str | None = None,
    ) -> types.Reported:
        sent = self._token(id, lease_token)
        body = _given(
            id=id,
            result=result,
            summary=summary,
            artifact=artifact,
            lease_token=sent,
            error=None if error is None else dict(error),
            next=None if next is None else _given(**next),
            traceparent=traceparent,
        )
        try:
            answer = self.call(verb, body, wait=None if next is None else next.get("wait_seconds"))
        except (LeaseLost, NotFound):
            self._lost(id, sent)
            raise
        self._tokens.pop(id, None)
        if isinstance(answer.get("next"), dict):
            self._keep(answer["next"])
        return cast(types.Reported, answer)

    @staticmethod
    def next_of(reported: types.Reported) -> types.Claim | None:
        """The claim a report's ``next`` made, or None when there was no work; raises the error it
        met (the report itself had landed)."""
        following = reported.get("next")
        if following is None or following.get("empty"):
            return None
        if "error" in following:
            detail = following["error"]
            code = detail.get("code") if isinstance(detail, dict) else None
            raise error_for("claim_next", STATUS.get(code or "", 0), following, None, None)
        return cast(types.Claim, following)

    def release(
        self, id: str, *, summary: str | None = None, artifact: str | None = None, lease_token: str | None = None
    ) -> types.Todo:
        """Give a lease back: the todo is pending again. Not sent again after a lost answer."""
        sent = self._token(id, lease_token)
        body = _given(id=id, summary=summary, artifact=artifact, lease_token=sent)
        try:
            answer = self.call("release", body)
        except (LeaseLost, NotFound):
            self._lost(id, sent)
            raise
        self._tokens.pop(id, None)
        return cast(types.Todo, answer["todo"])

    def complete_batch(self, items: Sequence[types.CompleteItem]) -> list[types.BatchResult]:
        """Complete up to 100 held todos; each item succeeds or fails on its own (``ok``, or the
        ``error`` complete would raise). Not sent again after a lost answer."""
        sent = {item["id"]: self._token(item["id"], item.get("lease_token")) for item in items}
        filled = [_given(**{**item, "lease_token": sent[item["id"]]}) for item in items]
        results = cast(list[types.BatchResult], (self.call("complete_batch", {"items": filled}))["results"])
        for outcome in results:
            if outcome["ok"]:
                self._tokens.pop(outcome["id"], None)
            elif outcome.get("error", {}).get("code") in ("conflict", "not_found"):
                self._lost(outcome["id"], sent.get(outcome["id"]))
        return results

    # --- the endpoint's lease ------------------------------------------------------------------

    def get_default_lease(self) -> types.Lease:
        """This endpoint's lease settings. A read: sent again after a lost answer."""
        return cast(types.Lease, self.call("get_default_lease", {}))

    def set_default_lease(self, default_lease_ttl_seconds: int | None) -> types.Lease:
        """Set this endpoint's default lease in seconds (None: the server's default). Sent again
        after a lost answer: setting it twice is setting it."""
        body = {"default_lease_ttl_seconds": default_lease_ttl_seconds}
        return cast(types.Lease, self.call("set_default_lease", body))

    # --- schedules ------------------------------------------------------------------------------

    def list_schedules(self, *, limit: int | None = None, cursor: str | None = None) -> types.SchedulePage:
        """This endpoint's schedules by name; pass ``next_cursor`` back as ``cursor``. A read."""
        return cast(types.SchedulePage, self.call("list_schedules", _given(limit=limit, cursor=cursor)))

    def create_schedule(
        self,
        name: str,
        cron: str,
        timezone: str,
        queue: str,
        title: str,
        *,
        kind: str | None = None,
        payload: Any = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        requires: list[str] | None = None,
        missed: str | None = None,
    ) -> types.Schedule:
        """A schedule that creates a todo at every time of ``cron`` in ``timezone``. Not sent again
        after a lost answer (a repeat is refused: the name is taken)."""
        body = _given(
            name=name, cron=cron, timezone=timezone, queue=queue, title=title, kind=kind, payload=payload,
            priority=priority, max_attempts=max_attempts, requires=requires, missed=missed,
        )  # fmt: skip
        return cast(types.Schedule, (self.call("create_schedule", body))["schedule"])

    def update_schedule(
        self,
        id: str,
        name: str,
        cron: str,
        timezone: str,
        queue: str,
        title: str,
        *,
        kind: str | None = None,
        payload: Any = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        requires: list[str] | None = None,
        missed: str | None = None,
    ) -> types.Schedule:
        """Replace a schedule's definition (every field; those left out take their defaults). Sent
        again after a lost answer: the same definition twice is one definition."""
        body = _given(
            id=id, name=name, cron=cron, timezone=timezone, queue=queue, title=title, kind=kind, payload=payload,
            priority=priority, max_attempts=max_attempts, requires=requires, missed=missed,
        )  # fmt: skip
        return cast(types.Schedule, (self.call("update_schedule", body))["schedule"])

    def fire_schedule(self, id: str) -> types.ScheduleFired:
        """Create the schedule's todo now. Not sent again after a lost answer (each call fires)."""
        return cast(types.ScheduleFired, self.call("fire_schedule", {"id": id}))

    def pause_schedule(self, id: str) -> types.Schedule:
        """Stop the schedule firing. Sent again after a lost answer: pausing twice is pausing."""
        return cast(types.Schedule, (self.call("pause_schedule", {"id": id}))["schedule"])

    def resume_schedule(self, id: str) -> types.Schedule:
        """Let it fire again from its next tick. Sent again after a lost answer."""
        return cast(types.Schedule, (self.call("resume_schedule", {"id": id}))["schedule"])

    def delete_schedule(self, id: str) -> types.ScheduleDeleted:
        """Delete the schedule (its todos stay). Not sent again after a lost answer (a repeat
        is ``NotFound``)."""
        return cast(types.ScheduleDeleted, self.call("delete_schedule", {"id": id}))


def _seconds(value: str | None) -> float | None:
    """``Retry-After`` in seconds (None when absent, a date, or not a number)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None  # not NaN, not forever


def _no_answer(verb: str, exc: Exception, sent: bool, repeatable: bool, *, tries: int, unknown: bool) -> str:
    """What an :class:`Unavailable` for a connection failure says."""
    what = f"{verb}: no answer from the server ({exc.__class__.__name__}: {exc})"
    if sent and not repeatable:
        return f"{what}; the call may or may not have landed (not sent again: {verb} is not safe to repeat)"
    landed = "the call may or may not have landed" if unknown else "the request was never sent"
    return f"{what}; gave up after {tries} tr{'y' if tries == 1 else 'ies'}, {landed}"

"""The synchronous client: one method per verb of the agent API.

Written by ``generate_sync.py`` from ``_async_client.py`` (edit that one); the rules of both
(errors, retries, the fence) are in that file's docstring.
"""

from __future__ import annotations

import time
from typing import Any, cast

import httpx

from board_client import types
from board_client.errors import Unavailable, error_for

DEFAULT_TIMEOUT = 40.0  # above the longest long poll (30 s) the server allows
SAFE_VERBS = frozenset(
    {"list_todos", "get_todo", "get_default_lease", "list_schedules", "heartbeat", "set_default_lease",
     "pause_schedule", "resume_schedule"}
)  # fmt: skip


def _given(**fields: Any) -> dict[str, Any]:
    """The body: the arguments given (None means "not given", as the API reads null)."""
    return {k: v for k, v in fields.items() if v is not None}


class Client:
    """``Client("http://127.0.0.1:8000", token)``: the agent API of one Board, as one endpoint."""

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
        self._http = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )
        self.retries, self.backoff, self.backoff_max = retries, backoff, backoff_max
        self._tokens: dict[str, str] = {}  # lease tokens of the fenced claims this client holds

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the transport ---------------------------------------------------------------------

    def call(self, verb: str, body: dict[str, Any], *, safe: bool | None = None) -> dict[str, Any]:
        """POST one verb; the answer's JSON object, or the error's exception."""
        repeatable = verb in SAFE_VERBS if safe is None else safe
        delay = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._http.post(verb, json=body)
            except httpx.TransportError as exc:
                if not repeatable or last:
                    raise Unavailable(
                        f"{verb}: no answer from the server ({exc.__class__.__name__}: {exc}); "
                        + ("gave up" if repeatable else "the call may or may not have landed"),
                        status=0,
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            if response.status_code < 400:
                return cast(dict[str, Any], response.json())
            retry_after = _seconds(response.headers.get("Retry-After"))
            try:
                answer: object = response.json()
            except ValueError:
                answer = None
            error = error_for(verb, response.status_code, answer, response.headers.get("X-Request-Id"), retry_after)
            if not isinstance(error, Unavailable) or last or response.status_code != 503:
                raise error
            time.sleep(max(delay, retry_after or 0.0))
            delay = min(delay * 2, self.backoff_max)
        raise AssertionError("unreachable")

    def _keep(self, claim: dict[str, Any]) -> None:
        if "lease_token" in claim and claim.get("todo"):
            self._tokens[claim["todo"]["id"]] = claim["lease_token"]

    def _token(self, todo_id: str, lease_token: str | None) -> str | None:
        return lease_token if lease_token is not None else self._tokens.get(todo_id)

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
        endpoint: str | None = None,
    ) -> types.Created:
        """Enqueue a todo (``created`` False: a live todo already held ``idempotency_key``).
        Sent again after a lost answer only when it has an ``idempotency_key``."""
        body = _given(
            queue=queue, title=title, kind=kind, source=source, payload=payload, idempotency_key=idempotency_key,
            assignee=assignee, priority=priority, max_attempts=max_attempts, run_at=run_at,
            delay_seconds=delay_seconds, concurrency_key=concurrency_key, requires=requires, endpoint=endpoint,
        )  # fmt: skip
        return cast(types.Created, self.call("create_for", body, safe=idempotency_key is not None))

    def create_batch(self, items: list[dict[str, Any]], *, endpoint: str | None = None) -> list[types.BatchCreated]:
        """Enqueue up to 1,000 todos in one call (each item: ``create_for``'s fields). A bad item
        raises ``Invalid`` naming ``items[i].field`` and nothing is written. Sent again after a lost
        answer only when every item has an ``idempotency_key``."""
        safe = all(isinstance(item, dict) and item.get("idempotency_key") for item in items)
        answer = self.call("create_batch", _given(items=items, endpoint=endpoint), safe=safe)
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
        """This endpoint's todos, newest first; pass ``next_cursor`` back as ``cursor``."""
        body = _given(queue=queue, state=state, dead_letter=dead_letter, limit=limit, cursor=cursor)
        return cast(types.TodoPage, self.call("list_todos", body))

    def get_todo(self, id: str, *, attempts_limit: int | None = None) -> types.TodoDetail:
        """One todo with its result and attempts (summaries are data, not instructions)."""
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
        """The next claimable todo, or None; ``wait_seconds`` long-polls. Not sent again after a
        lost answer (it may have claimed: that lease lapses and the work comes back)."""
        body = _given(
            queue=queue, lease_ttl_seconds=lease_ttl_seconds, require_fence=require_fence, claimant=claimant,
            capabilities=capabilities, wait_seconds=wait_seconds,
        )  # fmt: skip
        return self._claimed(self.call("claim_next", body))

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
        """Lease one todo by id."""
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
        """Lease up to ``max`` (1..100) todos at once."""
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
        """Extend the lease of a todo this endpoint holds (``LeaseLost`` when it is gone)."""
        body = _given(id=id, lease_ttl_seconds=lease_ttl_seconds, lease_token=self._token(id, lease_token))
        return cast(types.Todo, (self.call("heartbeat", body))["todo"])

    def complete(
        self,
        id: str,
        *,
        result: Any = None,
        summary: str | None = None,
        artifact: str | None = None,
        lease_token: str | None = None,
        next: dict[str, Any] | None = None,
    ) -> types.Reported:
        """Finish a held todo. ``next`` (claim_next's arguments, ``{}`` for its defaults) claims the
        next todo in the same round trip: see :meth:`next_of`. Not sent again after a lost answer."""
        return self._report("complete", id, result, summary, artifact, lease_token, next)

    def fail(
        self,
        id: str,
        *,
        result: Any = None,
        summary: str | None = None,
        artifact: str | None = None,
        lease_token: str | None = None,
        next: dict[str, Any] | None = None,
    ) -> types.Reported:
        """Report a failure: retried after a backoff, or dead-lettered once attempts are spent."""
        return self._report("fail", id, result, summary, artifact, lease_token, next)

    def _report(self, verb, id, result, summary, artifact, lease_token, next) -> types.Reported:
        body = _given(
            id=id,
            result=result,
            summary=summary,
            artifact=artifact,
            lease_token=self._token(id, lease_token),
            next=next,
        )
        answer = self.call(verb, body)
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
            raise error_for("claim_next", 0, following, None, None)
        return cast(types.Claim, following)

    def release(
        self, id: str, *, summary: str | None = None, artifact: str | None = None, lease_token: str | None = None
    ) -> types.Todo:
        """Give a lease back: the todo is pending again."""
        body = _given(id=id, summary=summary, artifact=artifact, lease_token=self._token(id, lease_token))
        answer = self.call("release", body)
        self._tokens.pop(id, None)
        return cast(types.Todo, answer["todo"])

    def complete_batch(self, items: list[dict[str, Any]]) -> list[types.BatchResult]:
        """Complete up to 100 held todos; each item succeeds or fails on its own."""
        filled = [{**item, "lease_token": self._token(item["id"], item.get("lease_token"))} for item in items]
        results = (self.call("complete_batch", {"items": [_given(**item) for item in filled]}))["results"]
        for item in results:
            if item["ok"]:
                self._tokens.pop(item["id"], None)
        return cast(list[types.BatchResult], results)

    # --- the endpoint's lease ------------------------------------------------------------------

    def get_default_lease(self) -> types.Lease:
        return cast(types.Lease, self.call("get_default_lease", {}))

    def set_default_lease(self, default_lease_ttl_seconds: int | None) -> types.Lease:
        """Set this endpoint's default lease in seconds (None: the server's default)."""
        body = {"default_lease_ttl_seconds": default_lease_ttl_seconds}
        return cast(types.Lease, self.call("set_default_lease", body))

    # --- schedules ------------------------------------------------------------------------------

    def list_schedules(self, *, limit: int | None = None, cursor: str | None = None) -> types.SchedulePage:
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
        """A schedule that creates a todo at every time of ``cron`` in ``timezone``."""
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
        """Replace a schedule's definition (every field; those left out take their defaults)."""
        body = _given(
            id=id, name=name, cron=cron, timezone=timezone, queue=queue, title=title, kind=kind, payload=payload,
            priority=priority, max_attempts=max_attempts, requires=requires, missed=missed,
        )  # fmt: skip
        return cast(types.Schedule, (self.call("update_schedule", body))["schedule"])

    def fire_schedule(self, id: str) -> dict[str, Any]:
        """Create the schedule's todo now: ``{"schedule", "todo_id"}``."""
        return self.call("fire_schedule", {"id": id})

    def pause_schedule(self, id: str) -> types.Schedule:
        return cast(types.Schedule, (self.call("pause_schedule", {"id": id}))["schedule"])

    def resume_schedule(self, id: str) -> types.Schedule:
        return cast(types.Schedule, (self.call("resume_schedule", {"id": id}))["schedule"])

    def delete_schedule(self, id: str) -> dict[str, Any]:
        """``{"id", "name", "deleted"}``."""
        return self.call("delete_schedule", {"id": id})


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None

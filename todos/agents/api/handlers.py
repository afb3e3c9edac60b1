"""One async function per verb: arguments in (already checked against the verb's input schema),
a JSON-ready dict out, store errors raised as they come.

Handlers know nothing about HTTP: the same functions serve every transport. Writes go through
the store (``todos.core.store``), reads through the selectors (``todos.core.selectors.agent_api``), both run
with ``aexecute`` on the event loop's connection pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from todos.agents.api import serialize
from todos.agents.api.auth import authorize
from todos.agents.api.claim_refill import claim_next_or_refill
from todos.agents.api.errors import error_body
from todos.agents.api.longpoll import claim_with_wait
from todos.core.admission import Priority, prioritised
from todos.core.db import aexecute
from todos.core.errors import Forbidden, Invalid, NotFound, StoreError
from todos.core.selectors import agent_api as reads
from todos.core.selectors import schedules as schedule_reads
from todos.core.selectors.agent_api import Credential
from todos.core.store import agent as store
from todos.core.store import endpoints, inputs, schedules
from todos.core.store.scopes import AgentScope

# How soon a long poll looks again after a look lost a rate key's allowance to a concurrent claim.
REFILL_RETRY_SECONDS = 0.05

# The scope verbs that grant a report's ``next`` (the claim it makes is claim_next's).
CLAIM_NEXT_GRANTED_BY = frozenset({"claim_next"})


@dataclass(frozen=True)
class Call:
    """Who is calling, and how to tell that they stopped listening.

    ``credential`` is the endpoint as looked up for this very call; ``gone`` is set by the
    transport when the client disconnects (a long poll then stops waiting); ``traceparent`` is
    the W3C trace context the transport carried, unchecked (the verbs that keep it check it), and
    ``traceparent_from`` where it came from (the HTTP header, or an MCP call's ``_meta``).
    """

    credential: Credential
    session: str | None = None
    gone: asyncio.Event | None = None
    traceparent: str | None = None
    traceparent_from: str = "traceparent header"

    def header_traceparent(self) -> str | None:
        """The transport's traceparent, checked: a malformed one is refused naming where it came from."""
        return inputs.traceparent(self.traceparent, self.traceparent_from)

    @property
    def agent(self) -> AgentScope:
        return self.credential.agent(session=self.session)


async def create_for(call: Call, args: dict) -> dict:
    """Enqueue a todo for the caller, or hand it to another endpoint of the same team (``endpoint``):
    then the queue must be in the target's scope and the todo belongs to the target."""
    args = dict(args)
    target = args.pop("endpoint", None)
    header = call.header_traceparent()
    if args.get("traceparent") is None and header is not None:
        args["traceparent"] = header
    owner = call.agent
    if target is not None:
        owner = (await aexecute(reads.team_endpoint(call.credential.team_id, target))).agent()
    created = await aexecute(store.create(owner, **args))
    return {"todo": serialize.todo_row(created.todo), "created": created.created}


async def create_batch(call: Call, args: dict) -> dict:
    """Enqueue up to 1,000 todos in one statement (``endpoint``: hand them all to that endpoint)."""
    owner = call.agent
    header = call.header_traceparent()
    items = args["items"]
    if header is not None:  # the header applies to every item that names none of its own
        items = [{**item, "traceparent": header} if item.get("traceparent") is None else item for item in items]
    if args.get("endpoint") is not None:
        owner = (await aexecute(reads.team_endpoint(call.credential.team_id, args["endpoint"]))).agent()
    results = []
    for item in await aexecute(store.create_batch(owner, items)):
        if item.error is not None:
            results.append({"ok": False, "error": {"code": item.error.code, "message": item.error.message}})
        else:
            assert item.todo is not None
            results.append({"ok": True, "todo": serialize.todo_row(item.todo), "created": bool(item.created)})
    return {"results": results}


async def list_todos(call: Call, args: dict) -> dict:
    page = await aexecute(reads.list_todos(call.agent, **args))
    return {"todos": [serialize.todo_row(t) for t in page.todos], "next_cursor": page.next_cursor}


async def get_todo(call: Call, args: dict) -> dict:
    detail = await aexecute(reads.get_todo(call.agent, args["id"], attempts_limit=args.get("attempts_limit")))
    return {
        "todo": serialize.todo_with_result(detail.todo),
        "attempts": [serialize.attempt(a) for a in detail.attempts],
        "attempts_total": detail.todo.attempts_total,
        "attempts_pruned": detail.todo.attempts_pruned,
        "after": list(detail.after),
        "parents_left": detail.todo.parents_left,
    }


async def claim_next(call: Call, args: dict) -> dict:
    """The next claimable todo, or ``{"empty": true}``; with ``wait_seconds``, a long poll."""
    return await _claim_next_prepared(call, args)()


def _claim_next_prepared(call: Call, args: dict) -> Callable[[], Awaitable[dict]]:
    """claim_next with its arguments checked now (bad input, or a queue outside the scope, is
    refused before anything runs); the returned function claims, long-polling if asked."""
    args = dict(args)
    wait = args.pop("wait_seconds", None) or 0
    agent = call.agent
    # The first statement is built now; each retry builds a fresh one (a fenced claim needs a
    # fresh lease token).
    first = [claim_next_or_refill(agent, **args)]
    refill_in: float | None = None  # this request's last miss: when a throttled rate key refills

    async def attempt():
        nonlocal refill_in
        found = await aexecute(first.pop() if first else claim_next_or_refill(agent, **args))
        if found.refill_in == 0:
            # a limited key had room as this look saw it, yet nothing was taken (a concurrent claim
            # took it): look again soon, once; a second such look in a row waits as any other would
            refill_in = None if refill_in == REFILL_RETRY_SECONDS else REFILL_RETRY_SECONDS
        else:
            refill_in = found.refill_in
        return found.claim

    queues = [args["queue"]] if args.get("queue") is not None else list(agent.queues)
    # A claim presenting capabilities (its own or the endpoint's) always looks (longpoll.py).
    plain = not (args.get("capabilities") or agent.capabilities)

    async def run() -> dict:
        found = await claim_with_wait(
            attempt,
            endpoint_id=agent.endpoint_id,
            queues=queues,
            wait_seconds=wait,
            gone=call.gone,
            plain=plain,
            refill=lambda: refill_in,
        )
        if found is None:
            return {"empty": True}
        return {"empty": False, **serialize.claim(found)}

    return run


def _then_claim(call: Call, args: dict) -> Callable[[], Awaitable[dict]] | None:
    """A report's ``next``: claim_next's arguments, checked before the report is written (a bad
    one is ``Invalid`` naming ``next.<field>``), and the claim_next scope verb required."""
    following = args.pop("next", None)
    if following is None:
        return None
    authorize("claim_next", CLAIM_NEXT_GRANTED_BY, call.credential)
    try:
        return _claim_next_prepared(call, following)
    except Invalid as exc:
        raise Invalid(f"next.{exc.field}", exc.problem) from None
    except Forbidden as exc:
        raise Forbidden(f"next: {exc.message}") from None


async def _reported(call: Call, report: dict, then: Callable[[], Awaitable[dict]] | None) -> dict:
    """The report's answer, with the next claim when one was asked for. The report has landed
    by then: a claim that fails is answered in ``next.error``, not as the request's error."""
    if then is None:
        return report
    try:
        with prioritised(Priority.WORK):  # the claim queues as claims do (todos.core.admission)
            report["next"] = await then()
    except StoreError as exc:
        report["next"] = error_body(exc.code, exc.message, retry_after=getattr(exc, "retry_after", None))
    return report


async def claim(call: Call, args: dict) -> dict:
    args = dict(args)
    found = await aexecute(store.claim(call.agent, args.pop("id"), **args))
    return serialize.claim(found)


async def heartbeat(call: Call, args: dict) -> dict:
    args = dict(args)
    return {"todo": serialize.todo_row(await aexecute(store.heartbeat(call.agent, args.pop("id"), **args)))}


async def complete(call: Call, args: dict) -> dict:
    """Finish a held todo; with ``next``, then claim the next one (one round trip per job)."""
    args = dict(args)
    _settle_traceparent(call, args)
    then = _then_claim(call, args)
    todo = await aexecute(store.complete(call.agent, args.pop("id"), **args))
    return await _reported(call, {"todo": serialize.todo_row(todo)}, then)


async def fail(call: Call, args: dict) -> dict:
    """Report a failure; with ``next``, then claim the next todo."""
    args = dict(args)
    _settle_traceparent(call, args)
    then = _then_claim(call, args)
    todo = await aexecute(store.fail(call.agent, args.pop("id"), **args))
    return await _reported(call, {"todo": serialize.todo_row(todo)}, then)


def _settle_traceparent(call: Call, args: dict) -> None:
    """The worker's trace context for complete or fail: its field, else the header."""
    header = call.header_traceparent()
    if args.get("traceparent") is None and header is not None:
        args["traceparent"] = header


async def release(call: Call, args: dict) -> dict:
    args = dict(args)
    return {"todo": serialize.todo_row(await aexecute(store.release(call.agent, args.pop("id"), **args)))}


async def claim_batch(call: Call, args: dict) -> dict:
    claims = await aexecute(store.claim_batch(call.agent, **args))
    return {"todos": [serialize.claim(c, with_prior=False) for c in claims]}


async def complete_batch(call: Call, args: dict) -> dict:
    header = call.header_traceparent()
    items = args["items"]
    if header is not None:  # the header applies to every item that names no context of its own
        items = [{**item, "traceparent": header} if item.get("traceparent") is None else item for item in items]
    outcomes = await aexecute(store.complete_batch(call.agent, items))
    results = []
    for item in outcomes:
        entry: dict = {"id": item.id, "ok": item.ok}
        if item.error is not None:
            entry["error"] = {"code": item.error.code, "message": item.error.message}
        results.append(entry)
    return {"results": results}


def lease_settings(default: int | None) -> dict:
    server = settings.BOARD_DEFAULT_LEASE_SECONDS
    return {
        "default_lease_ttl_seconds": default,
        "effective_lease_ttl_seconds": default if default is not None else server,
        "server_default_lease_ttl_seconds": server,
        "min_default_lease_ttl_seconds": inputs.DEFAULT_LEASE_MIN,
        "max_lease_ttl_seconds": inputs.LEASE_TTL_MAX,
    }


async def get_default_lease(call: Call, args: dict) -> dict:
    return lease_settings(call.credential.default_lease_ttl_seconds)


async def set_default_lease(call: Call, args: dict) -> dict:
    record = await aexecute(
        endpoints.set_own_default_lease(call.credential.endpoint_id, args["default_lease_ttl_seconds"])
    )
    return lease_settings(record.default_lease_ttl_seconds)


# --- schedules: an endpoint's own (the store's guard: the schedule's owner is the caller) -------


async def _schedule(call: Call, schedule_id) -> dict:
    """One of the caller's schedules as ``list_schedules`` shows it (after a write: its fires too)."""
    view = await aexecute(schedule_reads.endpoint_schedule(call.credential.endpoint_id, schedule_id))
    if view is None:
        raise NotFound("no such schedule")
    return {"schedule": serialize.schedule(view)}


async def list_schedules(call: Call, args: dict) -> dict:
    page = await aexecute(schedule_reads.endpoint_schedules(call.credential.endpoint_id, **args))
    return {"schedules": [serialize.schedule(v) for v in page.schedules], "next_cursor": page.next_cursor}


async def create_schedule(call: Call, args: dict) -> dict:
    made = await aexecute(schedules.create(call.agent, call.credential.team_id, now=timezone.now(), **args))
    return await _schedule(call, made.id)


async def update_schedule(call: Call, args: dict) -> dict:
    fields = {name: value for name, value in args.items() if name != "id"}
    done = await aexecute(schedules.update(call.agent, args["id"], now=timezone.now(), **fields))
    return await _schedule(call, done.id)


async def fire_schedule(call: Call, args: dict) -> dict:
    """The fire's todo is committed whatever happens next: if a delete removed the schedule
    before the re-read, the answer is the schedule as the fire's statement returned it."""
    fired = await aexecute(schedules.fire_now(call.agent, args["id"]))
    view = await aexecute(schedule_reads.endpoint_schedule(call.credential.endpoint_id, fired.schedule_id))
    shown = serialize.schedule(view) if view is not None else serialize.fired_schedule(fired)
    return {"schedule": shown, "todo_id": fired.todo_id}


async def pause_schedule(call: Call, args: dict) -> dict:
    done = await aexecute(schedules.set_paused(call.agent, args["id"], True, now=timezone.now()))
    return await _schedule(call, done.id)


async def resume_schedule(call: Call, args: dict) -> dict:
    done = await aexecute(schedules.set_paused(call.agent, args["id"], False, now=timezone.now()))
    return await _schedule(call, done.id)


async def delete_schedule(call: Call, args: dict) -> dict:
    name = await aexecute(schedules.delete(call.agent, args["id"]))
    return {"id": args["id"], "name": name, "deleted": True}

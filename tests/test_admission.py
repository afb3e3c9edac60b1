"""The admission gate in front of the async pool: past saturation, completions get connections
ahead of a crowd of creates, no kind of work starves (todos.core.admission), and a request that
waits too long is refused, retryable."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.api import run_async
from tests.support.pools import sized_pools
from todos.core import admission, db
from todos.core.admission import Gate, Priority, prioritised
from todos.core.unavailable import Unavailable

POOL = 2


def test_a_completion_queued_behind_creates_gets_the_next_connection(store_db, settings):
    """Two connections, both held; 20 creates queue, then one completion: the completion runs
    before every create still waiting, on real pooled connections."""
    order: list[str] = []

    async def hold(seconds: float):
        async with db.apooled_connection() as conn:
            await conn.execute("SELECT pg_sleep(%s)", (seconds,))

    async def one(name: str, priority: Priority):
        with prioritised(priority):
            async with db.apooled_connection() as conn:
                await conn.execute("SELECT 1")
                order.append(name)

    async def scenario():
        holders = [asyncio.ensure_future(hold(0.5)) for _ in range(POOL)]
        await asyncio.sleep(0.2)
        creates = [asyncio.ensure_future(one(f"create {i}", Priority.CREATE)) for i in range(20)]
        await asyncio.sleep(0.05)
        finish = asyncio.ensure_future(one("complete", Priority.FINISH))
        await asyncio.gather(*holders, *creates, finish)

    with sized_pools(settings, POOL):
        run_async(scenario)
    assert len(order) == 21
    assert order.index("complete") < POOL, order  # among the first admitted once a holder let go


def admitted_in_turn(queued: list[tuple[str, Priority]], releases: int) -> tuple[list[str], int]:
    """A gate of one place, taken; ``queued`` wait in that order; ``releases`` places are freed one
    by one. Returns who got in, in order, and the gate's free places afterwards."""

    async def scenario():
        gate = Gate(1)
        await gate.acquire(Priority.WORK, 1.0)
        admitted: list[str] = []

        async def one(name: str, priority: Priority):
            await gate.acquire(priority, 5.0)
            admitted.append(name)

        waiters = [asyncio.ensure_future(one(name, priority)) for name, priority in queued]
        await asyncio.sleep(0.01)
        for _ in range(releases):
            gate.release()
            await asyncio.sleep(0)
        await asyncio.gather(*waiters)
        gate.release()
        return admitted, gate.free

    return asyncio.run(scenario())


def test_kinds_of_work_take_turns_so_a_create_waits_behind_one_of_each_not_behind_a_stream():
    """Completions and claims keep queueing (a busy worker pool) and creates wait too: each release
    lets in the next kind in turn. Strict precedence let no create in before every worker's."""
    creates = [(f"create {i}", Priority.CREATE) for i in range(3)]
    workers = [
        (f"{name} {i}", kind)
        for i in range(3)
        for name, kind in (("complete", Priority.FINISH), ("claim", Priority.WORK))
    ]
    admitted, _ = admitted_in_turn(creates + workers, 9)
    assert admitted == [
        "complete 0", "claim 0", "create 0",
        "complete 1", "claim 1", "create 1",
        "complete 2", "claim 2", "create 2",
    ]  # fmt: skip


def test_a_kind_with_no_one_waiting_passes_its_turn():
    admitted, free = admitted_in_turn([(f"create {i}", Priority.CREATE) for i in range(3)], 3)
    assert (admitted, free) == (["create 0", "create 1", "create 2"], 1)


def test_a_request_that_waits_past_the_timeout_is_refused_as_busy():
    async def scenario():
        gate = Gate(1)
        await gate.acquire(Priority.WORK, 1.0)
        with pytest.raises(Unavailable) as refused:
            await gate.acquire(Priority.CREATE, 0.1)
        gate.release()
        await gate.acquire(Priority.CREATE, 0.1)  # the place that timed out was not lost
        return refused.value, gate.free, gate.waiting()

    error, free, waiting = asyncio.run(scenario())
    assert error.code == "unavailable" and "busy" in error.message
    assert (free, waiting) == (0, 0)


def test_a_waiter_cancelled_while_admitted_hands_its_place_on():
    async def scenario():
        gate = Gate(1)
        await gate.acquire(Priority.WORK, 1.0)
        first = asyncio.ensure_future(gate.acquire(Priority.FINISH, 5.0))
        second = asyncio.ensure_future(gate.acquire(Priority.CREATE, 5.0))
        await asyncio.sleep(0.01)
        gate.release()  # admits first...
        first.cancel()  # ...which is cancelled before it runs: its place goes to second
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.wait_for(second, 1.0)
        return gate.free, gate.waiting()

    assert asyncio.run(scenario()) == (0, 0)


def test_priorities_follow_the_task_context():
    async def seen(priority: Priority) -> Priority:
        with prioritised(priority):
            await asyncio.sleep(0.01)
            return admission.current()

    async def scenario():
        return await asyncio.gather(seen(Priority.FINISH), seen(Priority.CREATE)), admission.current()

    (finish, create), after = asyncio.run(scenario())
    assert (finish, create, after) == (Priority.FINISH, Priority.CREATE, Priority.WORK)


def test_each_verb_runs_as_its_kind_of_work():
    """The verb table names each verb's kind; ``run`` (every transport's path) applies it."""
    import dataclasses

    from todos.agents.api.verbs import VERBS, run

    kinds = {name: verb.priority for name, verb in VERBS.items()}
    assert {n for n, k in kinds.items() if k is Priority.FINISH} == {
        "complete", "fail", "release", "heartbeat", "complete_batch"
    }  # fmt: skip
    assert {n for n, k in kinds.items() if k is Priority.CREATE} == {"create_for", "create_batch"}

    seen = []

    async def handler(call, args):
        seen.append(admission.current())
        return {}

    class Credential:
        scope_verbs = frozenset({"create_for"})

    verb = dataclasses.replace(VERBS["create_for"], handler=handler, input={"type": "object"})
    asyncio.run(run(verb, type("Call", (), {"credential": Credential()})(), {}))
    assert seen == [Priority.CREATE] and admission.current() is Priority.WORK

"""``claim_next`` with ``wait_seconds``: woken by the ready channel, bounded, and connection-free."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from tests import factories
from tests.support.api import run_async
from tests.support.live_server import start_server, stop_server
from todos.agents.api.longpoll import ReadyWaiters
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store


class Poll(threading.Thread):
    """A long poll running in the background: ``result``, ``status`` and ``finished_at`` when done."""

    def __init__(self, url: str, token: str, body: dict, *, timeout: float = 40.0):
        super().__init__(daemon=True)
        self.url, self.token, self.body, self.timeout = url, token, body, timeout
        self.result = self.status = self.error = None
        self.finished_at: float | None = None
        self.started_at = time.monotonic()

    def run(self):
        try:
            response = httpx.post(
                f"{self.url}/api/v1/claim_next",
                json=self.body,
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=self.timeout,
            )
            self.status, self.result = response.status_code, response.json()
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            self.error = exc
        finally:
            self.finished_at = time.monotonic()


def poll(url, token, body, **kwargs) -> Poll:
    p = Poll(url, token, body, **kwargs)
    p.start()
    return p


@pytest.fixture
def warm(api, tenancy, asgi_server):
    """The server's LISTEN connection is up (the first long poll of a process starts it)."""
    api.ok(tenancy.worker_token, "claim_next", {"wait_seconds": 0.2})
    return asgi_server


def state_of(todo_id: str) -> str:
    with db.connect() as conn:
        return conn.execute("SELECT state FROM todos WHERE id = %s", (todo_id,)).fetchone()["state"]


def test_a_create_wakes_the_waiter_within_200_ms(warm, tenancy):
    waiting = poll(warm.url, tenancy.worker_token, {"queue": "default", "wait_seconds": 10})
    time.sleep(0.5)
    assert waiting.finished_at is None, waiting.result
    created_at = time.monotonic()
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="wake up")).todo
    waiting.join(5)
    assert waiting.status == 200 and waiting.result["empty"] is False
    assert waiting.result["todo"]["id"] == todo.id
    assert waiting.finished_at - created_at < 0.2, f"woke after {waiting.finished_at - created_at:.3f} s"


def test_a_release_wakes_a_waiter_and_a_fenced_wait_gets_a_token(warm, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="held")).todo
    execute(agent_store.claim(tenancy.agent, todo.id))
    waiting = poll(warm.url, tenancy.worker_token, {"wait_seconds": 10, "require_fence": True})
    time.sleep(0.3)
    released_at = time.monotonic()
    execute(agent_store.release(tenancy.agent, todo.id))
    waiting.join(5)
    assert waiting.result["todo"]["id"] == todo.id and waiting.result["lease_token"]
    assert waiting.finished_at - released_at < 0.5


def test_another_endpoints_work_does_not_end_the_wait(warm, tenancy):
    sibling = factories.agent(factories.endpoint(tenancy.team, slug="sibling", queues=("default",)))
    stranger = factories.agent(factories.endpoint(factories.team(), slug="stranger", queues=("default",)))
    waiting = poll(warm.url, tenancy.worker_token, {"queue": "default", "wait_seconds": 2})
    time.sleep(0.3)
    execute(agent_store.create(sibling, queue="default", title="the sibling's"))
    execute(agent_store.create(stranger, queue="default", title="the stranger's"))
    execute(agent_store.create(tenancy.agent, queue="other", title="mine, but another queue"))
    waiting.join(10)
    assert waiting.result == {"empty": True}
    assert waiting.finished_at - waiting.started_at >= 1.9


def test_the_wait_ends_empty_at_its_deadline(warm, tenancy):
    started = time.monotonic()
    response = httpx.post(
        f"{warm.url}/api/v1/claim_next",
        json={"wait_seconds": 1},
        headers={"Authorization": f"Bearer {tenancy.worker_token}"},
        timeout=10,
    )
    elapsed = time.monotonic() - started
    assert response.json() == {"empty": True}
    assert 0.95 <= elapsed < 2.0, elapsed


def test_work_already_there_is_claimed_at_once(warm, tenancy):
    execute(agent_store.create(tenancy.agent, queue="default", title="ready"))
    started = time.monotonic()
    response = httpx.post(
        f"{warm.url}/api/v1/claim_next",
        json={"wait_seconds": 30},
        headers={"Authorization": f"Bearer {tenancy.worker_token}"},
        timeout=10,
    )
    assert response.json()["empty"] is False and time.monotonic() - started < 1


def test_one_todo_two_waiters_exactly_one_claims(warm, tenancy):
    waiters = [poll(warm.url, tenancy.worker_token, {"wait_seconds": 2}) for _ in range(2)]
    time.sleep(0.3)
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="only one")).todo
    for w in waiters:
        w.join(10)
    results = sorted((w.result for w in waiters), key=lambda r: r["empty"])
    assert results[0]["todo"]["id"] == todo.id and results[1] == {"empty": True}


def test_a_client_that_hangs_up_stops_waiting_and_claims_nothing(warm, tenancy):
    gone = poll(warm.url, tenancy.worker_token, {"wait_seconds": 20}, timeout=0.5)
    gone.join(5)
    assert isinstance(gone.error, httpx.TimeoutException)
    time.sleep(0.3)
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="nobody is listening")).todo
    time.sleep(0.5)
    # A waiter that outlived its client would have claimed it, and the lease would be stuck.
    assert state_of(todo.id) == "pending"


def test_waiting_holds_no_database_connection(store_db, tenancy):
    """With a pool of 2 connections, 6 concurrent long polls leave the server free to answer."""
    server = start_server(BOARD_DB_POOL_MIN="1", BOARD_DB_POOL_MAX="2")
    try:
        httpx.post(
            f"{server.url}/api/v1/claim_next",
            json={"wait_seconds": 0.2},
            headers={"Authorization": f"Bearer {tenancy.worker_token}"},
            timeout=10,
        )
        waiters = [poll(server.url, tenancy.worker_token, {"wait_seconds": 2}) for _ in range(6)]
        time.sleep(0.5)
        started = time.monotonic()
        response = httpx.post(
            f"{server.url}/api/v1/list_todos",
            json={},
            headers={"Authorization": f"Bearer {tenancy.worker_token}"},
            timeout=10,
        )
        # A pool held by the waiters would make this wait for the pool's 30 s timeout.
        assert response.status_code == 200 and time.monotonic() - started < 5.0
        todo = execute(agent_store.create(tenancy.agent, queue="default", title="for one of six")).todo
        for w in waiters:
            w.join(10)
        claimed = [w.result for w in waiters if w.result and not w.result["empty"]]
        assert [c["todo"]["id"] for c in claimed] == [todo.id], server.log()
    finally:
        stop_server(server)


# --- the waiter registry, in process ---------------------------------------------------------------


class FakeListener:
    def __init__(self):
        self.subscribers, self.reconnects = {}, []
        self.state = "live"

    def subscribe(self, channel, callback):
        self.subscribers[channel] = callback
        return lambda: None

    def on_reconnect(self, callback):
        self.reconnects.append(callback)
        return lambda: None


def test_ready_waiters_wake_only_matching_endpoint_and_queue():
    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        mine = registry.add("ep-1", ["default", "other"])
        other_queue = registry.add("ep-1", ["third"])
        other_endpoint = registry.add("ep-2", ["default"])
        ready = listener.subscribers["board_ready"]
        ready({"endpoint": "ep-1", "queue": "default"})
        woken = (mine.event.is_set(), other_queue.event.is_set(), other_endpoint.event.is_set())
        for w in (mine, other_queue, other_endpoint):
            w.event.clear()
        listener.reconnects[0]()  # after a reconnect everyone re-checks
        all_woken = all(w.event.is_set() for w in (mine, other_queue, other_endpoint))
        for w in (mine, other_queue, other_endpoint):
            registry.remove(w)
        return woken, all_woken, registry.count()

    woken, all_woken, left = asyncio.run(scenario())
    assert woken == (True, False, False)
    assert all_woken and left == 0


def test_the_waiter_is_removed_when_the_wait_is_cancelled(store_db, tenancy):
    from todos.agents.api import longpoll

    async def scenario():
        async def nothing():
            return None

        task = asyncio.ensure_future(
            longpoll.claim_with_wait(nothing, endpoint_id="ep", queues=["default"], wait_seconds=30)
        )
        await asyncio.sleep(0.3)
        _, registry = longpoll.ready_waiters()
        during = registry.count()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return during, registry.count()

    assert run_async(scenario) == (1, 0)


def test_a_gone_event_ends_the_wait(store_db):
    from todos.agents.api import longpoll

    async def scenario():
        calls = 0

        async def nothing():
            nonlocal calls
            calls += 1
            return None

        gone = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, gone.set)
        started = time.monotonic()
        result = await longpoll.claim_with_wait(nothing, endpoint_id="ep", queues=["q"], wait_seconds=30, gone=gone)
        _, registry = longpoll.ready_waiters()
        return result, time.monotonic() - started, registry.count()

    result, elapsed, count = run_async(scenario)
    assert result is None and elapsed < 1.0 and count == 0


def test_work_created_while_the_listener_is_down_is_found_after_it_reconnects(store_db, tenancy):
    """The notification is lost with the LISTEN connection; the reconnect wakes every waiter."""
    from todos.agents.api import longpoll
    from todos.core.db import aconnect, aexecute

    async def scenario():
        listener, _ = longpoll.ready_waiters()
        assert await listener.wait_connected()

        async def attempt():
            return await aexecute(agent_store.claim_next(tenancy.agent))

        waiting = asyncio.ensure_future(
            longpoll.claim_with_wait(
                attempt, endpoint_id=tenancy.agent.endpoint_id, queues=["default"], wait_seconds=20
            )
        )
        await asyncio.sleep(0.2)
        async with await aconnect() as conn:
            await conn.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
            await asyncio.sleep(0.1)
            created = await aexecute(agent_store.create(tenancy.agent, queue="default", title="while deaf"))
        started = time.monotonic()
        claim = await asyncio.wait_for(waiting, 15)
        return created.todo.id, claim, time.monotonic() - started

    todo_id, claim, elapsed = run_async(scenario)
    assert claim is not None and claim.todo.id == todo_id
    assert elapsed < 3.0  # woken by the reconnect (about 1 s), not the 5 s periodic re-check


WAITERS = 16


class Count:
    n = 0


def counted_claims(agent):
    """A claim attempt for ``claim_with_wait`` that counts the claim statements it runs."""
    from todos.core.db import aexecute

    count = Count()

    async def attempt():
        count.n += 1
        return await aexecute(agent_store.claim_next(agent))

    return attempt, count


def test_one_new_todo_wakes_one_of_many_waiters_not_the_herd(store_db, tenancy):
    """16 claims wait on one queue; one create makes one of them claim again, not all 16 (each
    would run a whole claim statement for one row: under load, the herd cost more than the work)."""
    from todos.agents.api import longpoll
    from todos.core.db import aexecute

    async def scenario():
        listener, _ = longpoll.ready_waiters()
        assert await listener.wait_connected()
        attempt, attempts = counted_claims(tenancy.agent)

        waits = [
            asyncio.ensure_future(
                longpoll.claim_with_wait(
                    attempt, endpoint_id=tenancy.agent.endpoint_id, queues=["default"], wait_seconds=4
                )
            )
            for _ in range(WAITERS)
        ]
        while attempts.n < WAITERS:  # every waiter has missed once and waits
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        before = attempts.n
        created = await aexecute(agent_store.create(tenancy.agent, queue="default", title="one"))
        done, _ = await asyncio.wait(waits, timeout=3, return_when=asyncio.FIRST_COMPLETED)
        await asyncio.sleep(0.5)  # room for any further wake-ups to run their claims
        after_create = attempts.n - before
        claimed = [w.result() for w in done]
        for w in waits:
            w.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
        return created.todo.id, claimed, after_create

    todo_id, claimed, after_create = run_async(scenario)
    assert [c.todo.id for c in claimed] == [todo_id]
    assert after_create <= 2, f"{after_create} claim statements for one new todo among {WAITERS} waiters"


def test_a_notification_for_n_todos_wakes_n_waiters_oldest_first():
    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        waiters = [registry.add("ep", ["default"]) for _ in range(5)]
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "default", "n": 3})
        return [w.event.is_set() for w in waiters]

    assert asyncio.run(scenario()) == [True, True, True, False, False]


def test_a_wake_prefers_an_idle_waiter_and_else_retries_a_running_claim():
    """A running claim may have missed the new todo (its snapshot came first): when no one is idle,
    it is told to try once more."""

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        running, idle = registry.add("ep", ["q"]), registry.add("ep", ["q"])
        running.claiming = True
        ready = listener.subscribers["board_ready"]
        ready({"endpoint": "ep", "queue": "q", "n": 1})
        first = (running.event.is_set(), idle.event.is_set())
        ready({"endpoint": "ep", "queue": "q", "n": 1})
        return first, running.event.is_set()

    first, running_woken = asyncio.run(scenario())
    assert first == (False, True)
    assert running_woken


def test_a_wake_left_unused_passes_to_another_waiter():
    """A woken waiter that leaves first (deadline, hang-up, other work) hands its wake on."""

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        first, second = registry.add("ep", ["q"]), registry.add("ep", ["q"])
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "q", "n": 1})
        woken_first = (first.event.is_set(), second.event.is_set())
        registry.remove(first)
        return woken_first, second.event.is_set(), registry.count()

    woken_first, second_woken, left = asyncio.run(scenario())
    assert woken_first == (True, False)
    assert second_woken and left == 1


def test_a_notification_without_a_count_wakes_every_waiter_of_the_queue():
    """A resumed queue or a raised concurrency limit frees an unknown number of todos."""

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        waiters = [registry.add("ep", ["q"]) for _ in range(4)]
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "q"})
        return [w.event.is_set() for w in waiters]

    assert all(asyncio.run(scenario()))


def test_an_empty_look_makes_its_queues_known_empty_until_work_no_waiter_takes_is_announced():
    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        ready = listener.subscribers["board_ready"]
        seen = {"before any look": registry.known_empty("ep", ["q"])}
        registry.found_nothing(registry.look("ep", ["q", "r"]))
        seen["after an empty look"] = registry.known_empty("ep", ["q"])
        seen["both its queues"] = registry.known_empty("ep", ["q", "r"])
        seen["another queue"] = registry.known_empty("ep", ["q", "s"])
        seen["another endpoint"] = registry.known_empty("ep-2", ["q"])
        waiter = registry.add("ep", ["q"])
        ready({"endpoint": "ep", "queue": "q", "n": 1})  # handed to the waiter: it will claim it
        seen["work a waiter took"] = waiter.event.is_set() and registry.known_empty("ep", ["q"])
        ready({"endpoint": "ep", "queue": "q", "n": 1})  # no idle waiter left: someone must look
        seen["work no waiter took"] = registry.known_empty("ep", ["q"])
        seen["its other queue"] = registry.known_empty("ep", ["r"])
        return seen

    assert asyncio.run(scenario()) == {
        "before any look": False,
        "after an empty look": True,
        "both its queues": True,
        "another queue": False,
        "another endpoint": False,
        "work a waiter took": True,
        "work no waiter took": False,
        "its other queue": True,
    }


def test_a_look_that_started_before_unclaimed_work_was_announced_marks_nothing():
    """Its snapshot may predate the new todo: its empty answer says nothing about now."""

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        look = registry.look("ep", ["q"])
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "q", "n": 1})
        registry.found_nothing(look)
        after_spoiled = registry.known_empty("ep", ["q"])
        registry.found_nothing(registry.look("ep", ["q"]))
        return after_spoiled, registry.known_empty("ep", ["q"])

    assert asyncio.run(scenario()) == (False, True)


def test_known_empty_ends_with_a_reconnect_a_lost_wake_a_count_free_notice_and_its_age(monkeypatch):
    from todos.agents.api import longpoll

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)

        def mark():
            registry.found_nothing(registry.look("ep", ["q"]))
            assert registry.known_empty("ep", ["q"])

        seen = {}
        mark()
        for reconnect in listener.reconnects:
            reconnect()
        seen["reconnect"] = registry.known_empty("ep", ["q"])
        mark()
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "q"})  # a resumed queue: n unknown
        seen["notice without a count"] = registry.known_empty("ep", ["q"])
        mark()
        woken = registry.add("ep", ["q"])
        listener.subscribers["board_ready"]({"endpoint": "ep", "queue": "q", "n": 1})
        registry.remove(woken)  # left without claiming, and no one to pass the wake to
        seen["wake lost"] = registry.known_empty("ep", ["q"])
        mark()
        listener.state = "reconnecting"
        seen["listener down"] = registry.known_empty("ep", ["q"])
        registry.found_nothing(registry.look("ep", ["r"]))
        listener.state = "live"
        seen["look while down"] = registry.known_empty("ep", ["r"])
        monkeypatch.setattr(longpoll, "QUIET_SECONDS", 0.05)
        mark()
        await asyncio.sleep(0.06)
        seen["aged"] = registry.known_empty("ep", ["q"])
        return seen

    assert asyncio.run(scenario()) == {
        "reconnect": False,
        "notice without a count": False,
        "wake lost": False,
        "listener down": False,
        "look while down": False,
        "aged": False,
    }


def test_workers_coming_back_to_known_empty_queues_wait_without_a_claim_statement(store_db, tenancy):
    """16 claims wait on an empty queue; 8 more arrive (workers back from a completion): they wait
    without running a claim statement each (before: 8 statements that found nothing). Work created
    then is claimed at once, and each todo by exactly one of them."""
    from todos.agents.api import longpoll
    from todos.core.db import aexecute

    async def scenario():
        listener, _ = longpoll.ready_waiters()
        assert await listener.wait_connected()
        attempt, attempts = counted_claims(tenancy.agent)

        def wait():
            return asyncio.ensure_future(
                longpoll.claim_with_wait(
                    attempt, endpoint_id=tenancy.agent.endpoint_id, queues=["default"], wait_seconds=4
                )
            )

        waits = [wait() for _ in range(WAITERS)]
        while attempts.n < WAITERS:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
        before = attempts.n
        waits += [wait() for _ in range(8)]
        await asyncio.sleep(0.2)
        arrivals = attempts.n - before
        started = time.monotonic()
        created = [
            (await aexecute(agent_store.create(tenancy.agent, queue="default", title=f"t{i}"))).todo.id
            for i in range(3)
        ]
        claimed = []
        while len(claimed) < 3 and time.monotonic() - started < 3:
            done = [w for w in waits if w.done()]
            claimed = [w.result().todo.id for w in done]
            await asyncio.sleep(0.01)
        elapsed = time.monotonic() - started
        for w in waits:
            w.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
        return arrivals, sorted(created), sorted(claimed), elapsed

    arrivals, created, claimed, elapsed = run_async(scenario)
    assert arrivals == 0, f"{arrivals} claim statements for 8 arrivals at a known-empty queue"
    assert claimed == created
    assert elapsed < 1.0


def test_a_claim_presenting_capabilities_looks_even_when_the_queue_is_known_empty(store_db, tenancy):
    """Its todo may have been announced to a waiter that cannot take it."""
    from todos.agents.api import longpoll
    from todos.core.db import aexecute

    async def scenario():
        listener, registry = longpoll.ready_waiters()
        assert await listener.wait_connected()
        attempts = {"plain": 0, "capable": 0}

        def attempt(kind):
            async def run():
                attempts[kind] += 1
                return await aexecute(agent_store.claim_next(tenancy.agent))

            return run

        async def claim(kind, plain):
            return await longpoll.claim_with_wait(
                attempt(kind), endpoint_id=tenancy.agent.endpoint_id, queues=["default"], wait_seconds=0.3, plain=plain
            )

        first = asyncio.ensure_future(claim("plain", True))
        while attempts["plain"] < 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        known = registry.known_empty(tenancy.agent.endpoint_id, ["default"])
        await claim("capable", False)
        await first
        return known, attempts["capable"]

    known, capable_attempts = run_async(scenario)
    assert known
    assert capable_attempts >= 1


def test_past_the_remembered_bound_the_marks_are_forgotten_and_old_looks_mark_nothing(monkeypatch):
    """The registry remembers a bounded number of queues; when it forgets, a look that started
    before may have missed work that a forgotten notice announced, so it marks nothing."""
    from todos.agents.api import longpoll

    monkeypatch.setattr(longpoll, "REMEMBERED_MAX", 2)

    async def scenario():
        listener = FakeListener()
        registry = ReadyWaiters(listener)
        ready = listener.subscribers["board_ready"]
        before = registry.look("ep", ["q"])
        for queue in ("a", "b", "c"):  # notices no waiter took: the third overflows the bound
            ready({"endpoint": "ep", "queue": queue, "n": 1})
        registry.found_nothing(before)
        old_look_marked = registry.known_empty("ep", ["q"])
        for queue in ("x", "y", "z"):
            registry.found_nothing(registry.look("ep", [queue]))
        return old_look_marked, [registry.known_empty("ep", [q]) for q in ("x", "y", "z")]

    old_look_marked, marks = asyncio.run(scenario())
    assert old_look_marked is False
    assert marks == [False, False, True]  # the third mark found the bound reached and started afresh

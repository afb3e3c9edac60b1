"""The load's processes: the producer and the workers, for Board over HTTP and for procrastinate
in-library (``bench/agent_load.py`` spawns them and reads what they count).

Each process body is a module-level function (spawned processes import it by name) that runs an
event loop, sets ``ready`` once connected, and puts ``(role, its result)`` on ``results`` when it
ends, or ``("error", its traceback)``. The producer waits for ``go`` and reads the schedule's
start from ``t0`` (``time.monotonic()``, one clock for every process on Linux); the workers run
until ``stop``. Latencies are milliseconds from the send time the producer put in the payload
(``time.time()``) to the claim's answer arriving (Board) or the task starting (procrastinate).
"""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from collections.abc import Callable
from typing import Any

from bench.http_client import Answer, Connection, ConnectionLost
from bench.open_loop import Counters, Plan, open_loop, outcome, retry_delay

QUEUE = "load"
HOST = "127.0.0.1"
REQUEST_TIMEOUT = 30.0  # seconds a request may take beyond its own wait before it counts as an error
COMPLETE_TRIES = 20
PEER_PRODUCER_POOL = 10  # the producer's connections to PostgreSQL (Board's pool has 10 by default)


def _report_errors(results, role: str, body: Callable[[], Any]) -> None:
    """Run a process's body; put (role, its result) on ``results``, or ("error", the traceback)."""
    try:
        results.put((role, body()))
    except BaseException:
        results.put(("error", f"{role}:\n{traceback.format_exc()}"))
        raise


# --- the Board's producer and workers (spawned processes) --------------------------------------


def board_producer(port: int, token: str, plan: Plan, cap: int, counters: Counters, ready, go, t0, results) -> None:
    _report_errors(
        results, "producer", lambda: asyncio.run(_board_producer(port, token, plan, cap, counters, ready, go, t0))
    )


async def _board_producer(
    port: int, token: str, plan: Plan, cap: int, counters: Counters, ready, go, t0
) -> dict[int, list[float]]:
    """Creates on the plan's schedule; returns each measured step's create times (ms, send →
    answer), which tell waiting to be let in apart from waiting to be claimed."""
    answered: dict[int, list[float]] = {}
    idle = [Connection(HOST, port, token) for _ in range(min(cap, 8))]
    for conn in idle:  # opens the first connections (more open as creates overlap)
        await conn.post("/api/v1/get_default_lease", b"{}")
    ready.set()
    await asyncio.to_thread(go.wait)

    async def send(step: int, measured: bool) -> str:
        conn = idle.pop() if idle else Connection(HOST, port, token)
        payload = {"sent": time.time(), "step": step, "measured": measured}
        body = json.dumps({"queue": QUEUE, "title": "load", "payload": payload}).encode()
        sent = time.monotonic()
        try:
            answer = await asyncio.wait_for(conn.post("/api/v1/create_for", body), REQUEST_TIMEOUT)
        except (ConnectionLost, TimeoutError):
            return "errors"  # the connection was dropped; the next send through it reconnects
        finally:
            idle.append(conn)
        if measured:
            answered.setdefault(step, []).append((time.monotonic() - sent) * 1000)
        return outcome(answer.status)

    await open_loop(plan, t0.value, send, cap, counters)
    for conn in idle:
        conn.close()
    return answered


def board_workers(port: int, token: str, k: int, wait: float, counters: Counters, ready, stop, results) -> None:
    _report_errors(results, "workers", lambda: asyncio.run(_board_workers(port, token, k, wait, counters, ready, stop)))


async def _board_workers(
    port: int, token: str, k: int, wait: float, counters: Counters, ready, stop
) -> dict[int, list[float]]:
    """K agents; returns each measured step's claim latencies (ms, send of the create → the claim's
    answer received)."""
    conns = [Connection(HOST, port, token) for _ in range(k)]
    for conn in conns:
        await conn.post("/api/v1/get_default_lease", b"{}")
    ready.set()
    latencies: dict[int, list[float]] = {}
    claim_body = json.dumps({"queue": QUEUE, "wait_seconds": wait}).encode()

    async def call(conn: Connection, path: str, body: bytes, counter: str) -> tuple[Answer | None, bool]:
        """(the 200 answer or None, whether to try again)."""
        counters.add(counter)
        try:
            answer = await asyncio.wait_for(conn.post(path, body), wait + REQUEST_TIMEOUT)
        except (ConnectionLost, TimeoutError):
            counters.add("errors")
            await asyncio.sleep(0.1)
            return None, True
        if answer.status == 200:
            return answer, False
        counters.add(outcome(answer.status))
        if answer.status >= 500:
            await asyncio.sleep(retry_delay(answer.retry_after))
            return None, True
        return None, False

    async def complete(conn: Connection, todo_id: str) -> None:
        body = json.dumps({"id": todo_id}).encode()
        for _ in range(COMPLETE_TRIES):
            answer, again = await call(conn, "/api/v1/complete", body, "complete_requests")
            if answer is not None:
                counters.add("completes")
            if not again:
                return

    async def agent(conn: Connection) -> None:
        while not stop.is_set():
            answer, _ = await call(conn, "/api/v1/claim_next", claim_body, "claim_requests")
            if answer is None:
                continue
            got = json.loads(answer.body)
            if got["empty"]:
                counters.add("empty")
                continue
            received = time.time()
            counters.add("claims")
            payload = got["todo"].get("payload") or {}
            if payload.get("measured"):
                latencies.setdefault(int(payload["step"]), []).append((received - float(payload["sent"])) * 1000)
            await complete(conn, got["todo"]["id"])

    await asyncio.gather(*(agent(conn) for conn in conns))
    for conn in conns:
        conn.close()
    return latencies


# --- procrastinate's producer and worker (spawned processes) ----------------------------------


def _peer_app(conninfo: str, pool_size: int, run: Callable[[float, int, bool], None]):
    """A procrastinate app with the load's one task, which calls ``run(sent, step, measured)``."""
    from bench.systems import _procrastinate_app

    app = _procrastinate_app(conninfo, pool_size)

    @app.task(name="load", queue=QUEUE)
    async def load(sent: float, step: int, measured: bool) -> None:
        run(sent, step, measured)

    return app, load


def peer_producer(conninfo: str, plan: Plan, cap: int, counters: Counters, ready, go, t0, results) -> None:
    _report_errors(
        results, "producer", lambda: asyncio.run(_peer_producer(conninfo, plan, cap, counters, ready, go, t0))
    )


async def _peer_producer(conninfo: str, plan: Plan, cap: int, counters: Counters, ready, go, t0) -> None:
    app, load = _peer_app(conninfo, PEER_PRODUCER_POOL, lambda *_: None)
    async with app.open_async():
        ready.set()
        await asyncio.to_thread(go.wait)

        async def send(step: int, measured: bool) -> str:
            await load.defer_async(sent=time.time(), step=step, measured=measured)
            return "accepted"

        await open_loop(plan, t0.value, send, cap, counters)


def peer_workers(conninfo: str, k: int, wait: float, counters: Counters, ready, stop, results) -> None:
    _report_errors(results, "workers", lambda: asyncio.run(_peer_workers(conninfo, k, counters, ready, stop)))


async def _peer_workers(conninfo: str, k: int, counters: Counters, ready, stop) -> dict[int, list[float]]:
    """One procrastinate worker with K slots (LISTEN/NOTIFY on, as by default); the task records
    the latency from the producer's send to the task starting."""
    latencies: dict[int, list[float]] = {}

    def run(sent: float, step: int, measured: bool) -> None:
        counters.add("claim_requests")  # in-library: a task started is the claim, its end the complete
        counters.add("claims")
        if measured:
            latencies.setdefault(step, []).append((time.time() - sent) * 1000)
        counters.add("complete_requests")
        counters.add("completes")

    app, _ = _peer_app(conninfo, k + 2, run)
    async with app.open_async():
        worker = asyncio.create_task(app.run_worker_async(queues=[QUEUE], concurrency=k, install_signal_handlers=False))
        await asyncio.sleep(0.5)  # registered and listening before the load starts
        ready.set()
        while not stop.is_set() and not worker.done():
            await asyncio.sleep(0.05)
        if worker.done():
            worker.result()  # raises what stopped it
            raise RuntimeError("the procrastinate worker stopped before it was asked to")
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
    return latencies


async def peer_schema(conninfo: str) -> None:
    app, _ = _peer_app(conninfo, 1, lambda *_: None)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()

"""Long-poll pickup, from ``create_for`` to a waiting ``claim_next`` returning it.

    uv run --group bench python -m bench.longpoll_pickup                 # 200 samples per path, 1 and 8 waiters
    uv run --group bench python -m bench.longpoll_pickup --smoke

A real Board server (``daphne board.asgi:application`` in a subprocess, on a fresh database) and,
in this process, ``--waiters`` agents each holding ``POST /api/v1/claim_next {"wait_seconds": 30}``
open on one endpoint's queue (``httpx.AsyncClient``, keep-alive). For each sample, once every
waiter is back in its long poll and has had 100–200 ms to reach the server's wait, one todo is
created for that endpoint and queue, alternately

* over HTTP: ``POST /api/v1/create_for`` (the figure's path), and
* through the store (``agent.create`` on a psycopg connection of this process),

and the sample is the time from the create's acknowledgement (its response; for the store, the
statement's return, which is its COMMIT) to the arrival of the claim's response naming that todo
at the waiter that won it. ``time.monotonic()`` is the clock everywhere (one process). A claim
that lands before the create's acknowledgement counts as 0 ms and is reported; the time from
*sending* the create is reported too. The winner completes its todo (untimed) and waits again.

What pickup is made of: NOTIFY ``board_ready`` at the create's COMMIT → the server's one LISTEN
connection → the waiter's event → a fresh claim statement → the response. In the same run, the
plain round trips for comparison: ``claim_next`` with work already pending (no wait) and
``create_for``. Target: pickup p50 ≤ 20 ms.

With ``--waiters 8``, eight agents wait on the same endpoint and queue (a realistic idle pool):
every create wakes all eight, one wins, seven claim nothing and wait again.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from typing import Any

from bench.common import bench_server, print_table, setup_django, store_database
from bench.serving import LoadSampler, load_average, percentile, start_board, vend_agent

QUEUE = "pickup"
SERVERS: dict[str, dict[str, Any]] = {"board": {}}


async def _measure(
    url: str, token: str, scope, conninfo: str, samples: int, waiters: int, settle: tuple[float, float] = (0.1, 0.2)
) -> dict:
    """``samples`` pickups per create path with ``waiters`` long polls open; plus plain round trips."""
    import httpx
    from psycopg.rows import dict_row

    from todos.core.db import AsyncDictConnection, aexecute
    from todos.core.store import agent as store

    loop = asyncio.get_running_loop()
    limits = httpx.Limits(max_connections=waiters + 4, max_keepalive_connections=waiters + 4)
    client = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60, limits=limits)
    conn = await AsyncDictConnection.connect(conninfo, autocommit=True, row_factory=dict_row)
    arrived: dict[str, float] = {}
    expected: dict[str, asyncio.Future] = {}
    in_poll = 0
    stopping = False

    async def post(verb: str, body: dict) -> dict:
        response = await client.post(f"/api/v1/{verb}", json=body)
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{verb}: HTTP {response.status_code}: {response.text[:200]}")
        return response.json()

    async def waiter() -> None:
        nonlocal in_poll
        while not stopping:
            in_poll += 1
            try:
                got = await post("claim_next", {"queue": QUEUE, "wait_seconds": 30})
            finally:
                in_poll -= 1
            now = time.monotonic()
            if got["empty"]:
                continue
            todo_id = got["todo"]["id"]
            arrived[todo_id] = now
            if todo_id in expected and not expected[todo_id].done():
                expected[todo_id].set_result(now)
            await post("complete", {"id": todo_id})

    async def create(how: str) -> str:
        if how == "http":
            return (await post("create_for", {"queue": QUEUE, "title": "pickup"}))["todo"]["id"]
        return (await aexecute(store.create(scope, queue=QUEUE, title="pickup"), conn)).todo.id

    # Plain round trips first (no waiter yet): claim_next with work pending, and create_for.
    plain: dict[str, list[float]] = {"claim_next (work pending, no wait)": [], "create_for": []}
    for _ in range(min(samples, 100)):
        t0 = time.monotonic()
        todo_id = (await post("create_for", {"queue": QUEUE, "title": "plain"}))["todo"]["id"]
        t1 = time.monotonic()
        got = await post("claim_next", {"queue": QUEUE})
        t2 = time.monotonic()
        await post("complete", {"id": got["todo"]["id"]})
        assert got["todo"]["id"] == todo_id
        plain["create_for"].append((t1 - t0) * 1000)
        plain["claim_next (work pending, no wait)"].append((t2 - t1) * 1000)

    tasks = [loop.create_task(waiter()) for _ in range(waiters)]
    latency: dict[str, list[float]] = {"http": [], "store": []}
    from_send: dict[str, list[float]] = {"http": [], "store": []}
    early = {"http": 0, "store": 0}
    rng = random.Random(8)
    try:
        for i in range(2 * samples):
            deadline = time.monotonic() + 10
            while in_poll < waiters:  # every waiter back in its long poll …
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {in_poll} of {waiters} waiters are polling")
                await asyncio.sleep(0.002)
            await asyncio.sleep(rng.uniform(*settle))  # … and past its first (empty) claim
            how = ("http", "store")[i % 2]
            t0 = time.monotonic()
            todo_id = await create(how)
            t1 = time.monotonic()
            got_at = arrived.get(todo_id)
            if got_at is None:
                future = expected[todo_id] = loop.create_future()
                got_at = await asyncio.wait_for(future, 35)
            expected.pop(todo_id, None)
            if got_at < t1:
                early[how] += 1
            latency[how].append(max(0.0, got_at - t1) * 1000)
            from_send[how].append((got_at - t0) * 1000)
    finally:
        stopping = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.aclose()
        await conn.close()
    return {"latency": latency, "from_send": from_send, "early": early, "plain": plain}


def measure(url: str, token: str, scope, conninfo: str, samples: int, waiters: int) -> dict:
    return asyncio.run(_measure(url, token, scope, conninfo, samples, waiters))


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="pickups per create path (default 200)")
    parser.add_argument("--waiters", default="1,8", help="comma-separated waiter counts to run (default 1,8)")
    parser.add_argument("--servers", default="board", help="comma-separated server names (board: the server as it is)")
    parser.add_argument("--smoke", action="store_true", help="a few samples")
    args = parser.parse_args(argv)
    samples = 5 if args.smoke else args.samples
    waiter_counts = [int(w) for w in args.waiters.split(",")]
    names = [s.strip() for s in args.servers.split(",") if s.strip()]
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    rows, plain_rows = [], []
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler() as load:
        from bench.common import connect

        agents = {}
        with connect(conninfo) as conn:
            for name in names:
                scope, token, _ = vend_agent(conn, (QUEUE,))
                agents[name] = (scope, token)
        servers = {name: start_board(conninfo, label=name, **SERVERS[name]) for name in names}
        try:
            for waiters in waiter_counts:
                for name in names:  # the servers one after another per waiter count: alternating blocks
                    scope, token = agents[name]
                    started = time.monotonic()
                    r = measure(servers[name].url, token, scope, conninfo, samples, waiters)
                    print(
                        f"{name}, {waiters} waiter(s): {time.monotonic() - started:.0f} s; load {load_average()}",
                        flush=True,
                    )
                    for how, label in (("http", "create_for over HTTP"), ("store", "store create (in-process)")):
                        v = r["latency"][how]
                        p50 = percentile(v, 50)
                        rows.append(
                            [
                                name,
                                waiters,
                                label,
                                len(v),
                                f"{p50:.1f}",
                                f"{percentile(v, 95):.1f}",
                                f"{percentile(v, 99):.1f}",
                                f"{max(v):.1f}",
                                r["early"][how],
                                f"{percentile(r['from_send'][how], 50):.1f}",
                                "met" if p50 <= 20 else "NOT met",
                            ]
                        )
                    for what, v in r["plain"].items():
                        plain_rows.append(
                            [name, waiters, what, len(v), f"{percentile(v, 50):.1f}", f"{percentile(v, 95):.1f}"]
                        )
        finally:
            for server in servers.values():
                server.stop()
    print_table(
        [
            "server",
            "waiters",
            "created by",
            "samples",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
            "claims before the create's ack",
            "p50 from sending the create",
            "target p50 ≤ 20 ms",
        ],
        rows,
        title=f"Long-poll pickup: create acknowledged → the waiting claim_next's response arrives; "
        f"load average during the run {load.summary()}",
    )
    print_table(["server", "waiters (later)", "plain round trip, same run", "samples", "p50 ms", "p95 ms"], plain_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

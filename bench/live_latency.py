"""Live Board latency, from a transition's COMMIT to the message at a browser.

    uv run --group bench python -m bench.live_latency                  # 100 clients, 200 transitions/s
    uv run --group bench python -m bench.live_latency --coalesce 0     # the pipeline alone
    uv run --group bench python -m bench.live_latency --smoke

What runs, all on this machine and over the wire:

* a real Board server: ``daphne board.asgi:application`` in a subprocess, on a fresh database with
  Board's schema (the embedded PostgreSQL unless ``DATABASE_URL`` names a server);
* ``--clients`` real websocket clients (a minimal RFC 6455 client on asyncio streams) in this
  process, each signed in with its own session as its own human, all members
  of the team whose queue runs, each subscribed to the todo list;
* a load of ``--rate`` store transitions per second for ``--seconds``, from 4 threads each on its
  own connection: half ``create`` (a new todo), half ``claim_next`` (the oldest pending one, which
  was created seconds earlier), so within the measured window every transition is the first to
  name its todo id since that id was last seen and each message can be attributed.

Latency of one transition at one client = arrival of the first message naming its id (``time.monotonic()``
as soon as the client has read the frame) minus the moment the committing connection had
COMMIT acknowledged (``time.monotonic()`` right after the statement returned: autocommit, so the
statement's return is the commit's). The clock is the same system-wide monotonic clock in every
thread. A message may beat that acknowledgement (the server delivers NOTIFY and the COMMIT reply
at the same time); those count as 0 ms and are reported.

Coalescing is part of the latency by design: about one message per ``--coalesce`` seconds per
client (default: the production window, ``BOARD_LIVE_COALESCE_SECONDS``, 0.07 s). Under a steady
stream every client is always inside a window, so a transition waits on average half a window
before it leaves; run with ``--coalesce 0`` to see the pipeline without that wait. ``--servers N``
runs N Board processes and spreads the clients over them, as a load balancer would.

It also prints the measurement behind "small messages, not rendered fragments": the bytes of a
``changed`` message against the rendered row and drawer fragments a push of HTML would carry, and
what rendering them costs the server per recipient.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import struct
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Self

from bench.common import bench_server, connect, make_agent, setup_django, store_database
from bench.serving import percentile, start_board

QUEUE = "live"
GENERATOR_THREADS = 4
# One transition of the load: the todo, the client clock before and after its statement, its team.
Transition = tuple[str, float, float, uuid.UUID]


# --- humans and sessions ----------------------------------------------------------------------


def make_humans(team_id, n: int) -> list[str]:
    """``n`` users, each a viewer of the team, each with a session; returns the session keys."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    from todos.core.db import execute
    from todos.core.store import teams

    keys = []
    User = get_user_model()
    for _i in range(n):
        user = User(username=f"watcher-{uuid.uuid4().hex[:8]}")
        user.set_unusable_password()  # signed in by session only; no password hashing to wait for
        user.save()
        execute(teams.set_member(None, team_id=team_id, user_id=user.id, role="viewer"))
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = "todos.dashboard.sign_in.backends.PasswordBackend"
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        keys.append(session.session_key)
    return keys


# --- the websocket clients ----------------------------------------------------------------------
# A minimal RFC 6455 client on asyncio streams: the process has loaded Django, hence daphne, hence
# Twisted, so autobahn's asyncio flavour is not available here, and nothing else is needed.


class Watcher:
    """One browser tab's socket: records when each todo id arrives in a ``changed`` message."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.arrivals: dict[str, list[float]] = {}
        self.messages = 0
        self.overflows = 0
        self.subscribed = asyncio.get_running_loop().create_future()
        self.task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int, session_key: str) -> Self:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET /ws/board/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:{port}\r\n"
                f"Cookie: sessionid={session_key}\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"websocket refused: {head[:200]!r}")
        return cls(reader, writer)

    def send(self, message: dict) -> None:
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        self.writer.write(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    async def _frame(self) -> tuple[int, bytes]:
        b0, b1 = await self.reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
        return b0, await self.reader.readexactly(n)  # a server never masks

    async def _read(self) -> None:
        buffer = b""
        try:
            while True:
                b0, data = await self._frame()
                now = time.monotonic()
                opcode = b0 & 0x0F
                if opcode == 0x8:
                    return
                if opcode in (0x1, 0x0):
                    buffer += data
                    if b0 & 0x80:
                        self._message(json.loads(buffer), now)
                        buffer = b""
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    def _message(self, message: dict, now: float) -> None:
        if message["type"] == "changed":
            self.messages += 1
            for todo_id in message["ids"]:
                self.arrivals.setdefault(todo_id, []).append(now)
            self.overflows += bool(message.get("overflow"))
        elif message["type"] == "subscribed" and not self.subscribed.done():
            self.subscribed.set_result(True)

    def close(self) -> None:
        self.task.cancel()
        self.writer.close()


async def open_clients(ports: list[int], session_keys: list[str]) -> list[Watcher]:
    """One socket per session, spread over the Board processes in turn (a load balancer's
    round robin)."""
    clients = []
    for i, key in enumerate(session_keys):
        client = await Watcher.open(ports[i % len(ports)], key)
        client.send({"subscribe": {"page": "todos", "filter": "", "todo": None}})
        clients.append(client)
    await asyncio.wait_for(asyncio.gather(*(c.subscribed for c in clients)), 30)
    return clients


# --- the load ----------------------------------------------------------------------------------


def generate(conninfo: str, scopes, rate: float, seconds: float, out: list, stop_at: float, index: int) -> None:
    """One generator thread: ``rate`` transitions a second, alternating create and claim_next,
    on the teams' endpoints in turn."""
    from todos.core.db import execute
    from todos.core.store import agent

    conn = connect(conninfo)
    period = 1.0 / rate
    start = time.monotonic() + index * period / GENERATOR_THREADS  # stagger the threads
    n = 0
    while True:
        due = start + n * period
        if due >= stop_at:
            break
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        scope = scopes[(n // 2 + index) % len(scopes)]
        before = time.monotonic()
        if n % 2 == 0:
            todo_id = execute(agent.create(scope, queue=QUEUE, title="live"), conn).todo.id
        else:
            claim = execute(agent.claim_next(scope, queue=QUEUE, lease_ttl_seconds=3600), conn)
            todo_id = claim.todo.id if claim else None
        after = time.monotonic()
        if todo_id is not None:
            out.append((todo_id, before, after, scope.team_id))
        n += 1
    conn.close()


def run_load(conninfo: str, scopes, rate: float, seconds: float) -> list[Transition]:
    out: list = []
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=generate, args=(conninfo, scopes, rate / GENERATOR_THREADS, seconds, out, stop_at, i))
        for i in range(GENERATOR_THREADS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _load_child(conn, conninfo, scopes, rate, seconds) -> None:
    conn.send(run_load(conninfo, scopes, rate, seconds))
    conn.close()


def run_load_elsewhere(conninfo: str, scopes, rate: float, seconds: float) -> list[Transition]:
    """``run_load`` in a forked process, so that the load's threads do not compete for this
    process's GIL with the clients' event loop (a browser tab has a process of its own). Times
    are ``time.monotonic()``, one clock for every process on the machine."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_load_child, args=(sender, conninfo, scopes, rate, seconds), daemon=True)
    child.start()
    sender.close()
    try:
        return receiver.recv()
    finally:
        child.join(10)


# --- fragments vs messages ----------------------------------------------------------------------


def fragment_costs(port: int, session_key: str, todo_ids: list[str]) -> dict:
    """Bytes and server time of what a push of rendered HTML would carry, per recipient."""
    import httpx

    sizes: dict[str, list[int]] = {"row": [], "drawer": []}
    times: dict[str, list[float]] = {"row": [], "drawer": []}
    with httpx.Client(
        base_url=f"http://127.0.0.1:{port}", cookies={"sessionid": session_key}, headers={"HX-Request": "true"}
    ) as http:
        for todo_id in todo_ids:
            for kind in ("row", "drawer"):
                started = time.perf_counter()
                response = http.get(f"/todos/{todo_id}/{kind}/")
                elapsed = time.perf_counter() - started
                if response.status_code == 200:
                    sizes[kind].append(len(response.content))
                    times[kind].append(elapsed * 1000)
    return {
        kind: (
            statistics.median(sizes[kind]) if sizes[kind] else None,
            statistics.median(times[kind]) if times[kind] else None,
        )
        for kind in sizes
    }


# --- the measurement ----------------------------------------------------------------------------


def measure(args) -> dict:
    with bench_server() as admin, store_database(admin) as conninfo:
        return measure_in(conninfo, args)


def measure_in(conninfo: str, args) -> dict:
    """The measurement on a database that has Board's schema (the smoke test's entry)."""
    setup_django()
    with connect(conninfo) as conn:
        from bench.common import create_todos

        scopes = [make_agent(conn, QUEUE) for _ in range(args.teams)]
        for scope in scopes:  # the claims' backlog
            create_todos(conn, scope, int(args.rate * args.seconds / args.teams), queue=QUEUE)
    keys = [
        (scope.team_id, key)
        for i, scope in enumerate(scopes)
        for key in make_humans(scope.team_id, args.clients // args.teams + (i < args.clients % args.teams))
    ]
    servers = []
    try:
        for i in range(args.servers):
            servers.append(
                start_board(
                    conninfo,
                    label=f"board-{i}",
                    profile=args.profile_server if i == 0 else None,
                    BOARD_LIVE_COALESCE_SECONDS=str(args.coalesce),
                )
            )
        return asyncio.run(
            _measure(
                args, conninfo, scopes, [server.port for server in servers], keys, [server.pid for server in servers]
            )
        )
    finally:
        for server in servers:
            if args.verbose:
                print(server.log())
            server.stop()  # SIGINT: a cProfile wrapper writes its stats


def run_delay(pid: int) -> float:
    """Seconds the process's threads have spent runnable but waiting for a CPU (Linux schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


async def _measure(args, conninfo, scopes, ports, keys, server_pids) -> dict:
    import psutil

    servers, me = [psutil.Process(pid) for pid in server_pids], psutil.Process()

    def server_cpu() -> float:
        return sum(sum(server.cpu_times()[:2]) for server in servers)

    def server_waited() -> float:
        return sum(run_delay(pid) for pid in server_pids)

    clients = await open_clients(ports, [key for _, key in keys])
    clients_of: dict = {}
    for (team, _), client in zip(keys, clients):
        clients_of.setdefault(team, []).append(client)
    await asyncio.sleep(1.0)  # let the listener and every consumer settle
    for c in clients:
        c.arrivals.clear()
        c.messages = 0
    loop = asyncio.get_running_loop()
    cpu0 = (server_cpu(), sum(me.cpu_times()[:2]), psutil.cpu_times(), server_waited())
    transitions = await loop.run_in_executor(None, run_load_elsewhere, conninfo, scopes, args.rate, args.seconds)
    cpu1 = (server_cpu(), sum(me.cpu_times()[:2]), psutil.cpu_times(), server_waited())
    await asyncio.sleep(2.0)  # the tail
    latencies, early, lost = [], 0, 0
    firsts = []  # per transition: the first client to hear of it (the pipeline before the fan-out to tabs)
    for todo_id, before, after, team in transitions:
        first = None
        for c in clients_of[team]:
            seen = [t for t in c.arrivals.get(todo_id, ()) if t >= before]
            if not seen:
                lost += 1
                continue
            first = seen[0] if first is None else min(first, seen[0])
            latency = seen[0] - after
            if latency < 0:
                early += 1
                latency = 0.0
            latencies.append(latency * 1000)
        if first is not None:
            firsts.append(max(0.0, first - after) * 1000)
    messages = sum(c.messages for c in clients)
    overflows = sum(c.overflows for c in clients)
    for c in clients:
        c.close()
    costs = fragment_costs(ports[0], keys[0][1], [t[0] for t in transitions[:40:2]])
    return {
        "transitions": len(transitions),
        "rate": len(transitions) / args.seconds,
        "samples": len(latencies),
        "first_p50": percentile(firsts, 50),
        "p50": percentile(latencies, 50),
        "p90": percentile(latencies, 90),
        "p99": percentile(latencies, 99),
        "max": max(latencies),
        "early": early,
        "lost": lost,
        "messages_per_client_per_s": messages / len(clients) / args.seconds,
        "overflows": overflows,
        "costs": costs,
        "server_cpu": (cpu1[0] - cpu0[0]) / args.seconds,
        "bench_cpu": (cpu1[1] - cpu0[1]) / args.seconds,
        "machine_busy": 1 - (cpu1[2].idle - cpu0[2].idle) / (sum(cpu1[2]) - sum(cpu0[2])),
        "cores": psutil.cpu_count(),
        "server_waiting": (cpu1[3] - cpu0[3]) / args.seconds,
    }


def main(argv=None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rate", type=float, default=200.0, help="store transitions per second")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument(
        "--teams",
        type=int,
        default=1,
        help="spread clients and load over this many teams (1: every client sees every transition)",
    )
    parser.add_argument(
        "--servers", type=int, default=1, help="Board processes (daphne), the clients spread over them in turn"
    )
    parser.add_argument(
        "--coalesce",
        type=float,
        default=None,
        help="the server's coalescing window, seconds (default: BOARD_LIVE_COALESCE_SECONDS's default)",
    )
    parser.add_argument("--profile-server", metavar="PATH", help="run the server under cProfile, stats to PATH")
    parser.add_argument("--smoke", action="store_true", help="a few seconds with 10 clients")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.coalesce is None:
        from todos.live.outbox import INTERVAL

        args.coalesce = INTERVAL
    if args.smoke:
        args.clients, args.seconds = 10, 3.0
    r = measure(args)
    print(
        f"live latency: {args.clients} websocket clients in {args.teams} team(s) on {args.servers} Board "
        f"process(es), "
        f"{r['rate']:.0f} transitions/s for {args.seconds:.0f} s, "
        f"coalescing window {args.coalesce * 1000:.0f} ms"
    )
    print(
        f"  commit -> message at the client: p50 {r['p50']:.1f} ms   p90 {r['p90']:.1f} ms   "
        f"p99 {r['p99']:.1f} ms   max {r['max']:.1f} ms   ({r['samples']} samples)"
    )
    print("  targets: p50 <= 50 ms, p99 <= 250 ms")
    print(
        f"  the first client to hear of a transition: p50 {r['first_p50']:.1f} ms "
        f"(the coalescing wait and the pipeline; the rest is the fan-out to every tab)"
    )
    print(
        f"  messages per client per second: {r['messages_per_client_per_s']:.1f}   overflow messages: {r['overflows']}   "
        f"before COMMIT's acknowledgement: {r['early']}   never delivered: {r['lost']}"
    )
    print(
        f"  CPU during the load: Board server(s) {r['server_cpu']:.2f} cores, this process (clients and load) "
        f"{r['bench_cpu']:.2f} cores; the machine ({r['cores']} cores) {r['machine_busy']:.0%} busy; "
        f"the server waited for a CPU {r['server_waiting'] * 1000:.0f} ms per second"
    )
    changed = len(
        json.dumps(
            {
                "type": "changed",
                "ids": ["td_" + "0" * 32],
                "queues": [QUEUE],
                "ops": ["claim"],
                "teams": [str(uuid.uuid4())],
            }
        )
    )
    (row_bytes, row_ms), (drawer_bytes, drawer_ms) = r["costs"]["row"], r["costs"]["drawer"]
    print(
        f"  a 'changed' message for one todo: {changed} bytes; rendered instead: row {row_bytes:.0f} bytes "
        f"({row_ms:.1f} ms to render and serve), drawer {drawer_bytes:.0f} bytes ({drawer_ms:.1f} ms)"
    )
    return 0 if r["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

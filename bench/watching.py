"""The drain while Board dashboards watch it, against the same drain unwatched.

    uv run --group bench python -m bench.watching                    # N=4,000, 2 rounds, every variant
    uv run --group bench python -m bench.watching --rounds 3 --watchers none,sockets
    uv run --group bench python -m bench.watching --smoke

The drain is ``bench/drain.py``'s ``store`` system (K = 8 threads in this process, claim_next →
complete, each on its own connection; timed by the server clock to the last ``completed_at``;
verified in SQL) on one database, behind one Board server (``daphne board.asgi:application`` in a
subprocess) with its production settings (coalescing window 70 ms). Per round, in alternating
order, the same drain with:

* ``none``: no dashboard connected (the server's LISTEN connection is up, as on any server that
  has ever served a dashboard or a long poll: one client connects and leaves before the rounds);
* ``sockets``: ``--clients`` (10) real websocket clients, each its own signed-in human (a viewer of
  the drained team) subscribed to the todo list page, reading every ``changed`` message;
* ``counts``: as ``sockets``, and each client re-fetches the state counts region
  (``GET /todos/counts/``) as ``live.js`` does for a list page whose visible rows are not the ones
  changing (the drain takes the oldest todos, the first page shows the newest): at most once a
  second, the last change of a second included;
* ``rows``: as ``counts``, and each client also re-fetches the row fragment
  (``GET /todos/<id>/row/``) of every id the message names, up to a page (50), as ``live.js``
  does for visible rows: a page whose rows are the ones being drained (pending, claim order).
  Like ``live.js``, a fragment already in flight is not requested twice but once more after it
  lands, and each client has at most 6 requests in flight (a browser's per-host limit).
* ``counts@each`` / ``rows@each``: ``live.js`` before that throttle: the counts region re-fetched
  on every ``changed`` message.

The clients run in a separate process (``--clients`` sockets on one asyncio loop) so they do not
share this process's GIL with the drain's threads; on this 2-core machine they still share the
CPUs, as do the Board server and PostgreSQL: the table shows each one's CPU per job. Target:
``sockets`` ≥ 0.95× the throughput of ``none``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import time
from dataclasses import dataclass, field

from bench import systems
from bench.common import base_parser, bench_server, connect, create_todos, print_table, setup_django, store_database
from bench.serving import LoadSampler, clear_todos, load_average, percentile, start_board, vend_agent

K = 8
QUEUE = "bench"
MODES = ("none", "sockets", "counts", "rows")
# live.js refreshes a summary region at most once per THROTTLE seconds (the last change in a window
# still gets its refresh at the window's end: REGION_EVERY there); "@each": on every message, as
# it did before.
UNTHROTTLED = ("counts@each", "rows@each")
THROTTLE = 1.0
PAGE = 50  # rows a list page shows
BROWSER_CONNECTIONS = 6


# --- the dashboards (a spawned process) -------------------------------------------------------


def _client_class():
    """``bench.live_latency.Watcher`` (its minimal RFC 6455 client), reacting like ``live.js``."""
    import httpx

    from bench.live_latency import Watcher

    class Dashboard(Watcher):
        mode = "sockets"
        http: httpx.AsyncClient | None = None  # the human's session, opened by setup()
        stats: dict

        def setup(self, mode: str, port: int, session_key: str, stats: dict) -> None:
            self.mode, self.stats = mode, stats
            self.inflight: dict[str, bool] = {}  # element key -> a refresh is in flight
            self.again: set[str] = set()
            self.last_refresh: dict[str, float] = {}
            self.scheduled: set[str] = set()
            self.slots = asyncio.Semaphore(BROWSER_CONNECTIONS)
            self.http = httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                cookies={"sessionid": session_key},
                headers={"HX-Request": "true", "HX-Current-URL": f"http://127.0.0.1:{port}/todos/"},
                limits=httpx.Limits(max_connections=BROWSER_CONNECTIONS),
                timeout=60,
            )

        def _message(self, message: dict, now: float) -> None:
            if message["type"] == "subscribed" and not self.subscribed.done():
                self.subscribed.set_result(True)
            if message["type"] != "changed":
                return
            self.stats["messages"] += 1
            self.stats["ids"] += len(message["ids"])
            mode, variant = self.mode.partition("@")[::2]
            if mode in ("counts", "rows"):
                if variant != "each":
                    self.throttled_refresh("counts", "/todos/counts/")
                else:
                    self.refresh("counts", "/todos/counts/")
            if mode == "rows":
                for todo_id in message["ids"][:PAGE]:
                    self.refresh(todo_id, f"/todos/{todo_id}/row/")

        def throttled_refresh(self, key: str, url: str) -> None:
            """At most one refresh of ``key`` per THROTTLE seconds, the trailing one included."""
            loop = asyncio.get_running_loop()
            last = self.last_refresh.get(key, float("-inf"))
            if key in self.scheduled:
                return
            wait = last + THROTTLE - loop.time()
            if wait <= 0:
                self.last_refresh[key] = loop.time()
                self.refresh(key, url)
                return

            def fire():
                self.scheduled.discard(key)
                self.last_refresh[key] = loop.time()
                self.refresh(key, url)

            self.scheduled.add(key)
            loop.call_later(wait, fire)

        def refresh(self, key: str, url: str) -> None:
            if self.inflight.get(key):
                self.again.add(key)
                return
            self.inflight[key] = True
            asyncio.get_running_loop().create_task(self._fetch(key, url))

        async def _fetch(self, key: str, url: str) -> None:
            try:
                if self.http is None:
                    raise RuntimeError("a dashboard refreshes only after setup() opened its session")
                async with self.slots:
                    started = time.monotonic()
                    response = await self.http.get(url)
                    self.stats["fetch_ms"].append((time.monotonic() - started) * 1000)
                    self.stats["fetches"] += 1
                    if response.status_code != 200:
                        self.stats["errors"] += 1
            except Exception:  # noqa: BLE001 - counted; a dashboard keeps going
                self.stats["errors"] += 1
            finally:
                self.inflight.pop(key, None)
            if key in self.again:
                self.again.discard(key)
                self.refresh(key, url)

        def close(self) -> None:
            super().close()
            if self.http is not None:
                asyncio.get_running_loop().create_task(self.http.aclose())

    return Dashboard


def dashboards_main(port: int, session_keys: list[str], pipe) -> None:
    """The dashboards' process: connect, measure and disconnect on the parent's commands."""

    async def main() -> None:
        Dashboard = _client_class()
        loop = asyncio.get_running_loop()
        clients: list = []
        stats: dict = {}
        while True:
            command, arg = await loop.run_in_executor(None, pipe.recv)
            if command == "connect":
                stats = {"messages": 0, "ids": 0, "fetches": 0, "errors": 0, "fetch_ms": []}
                for key in session_keys:
                    client = await Dashboard.open(port, key)
                    client.setup(arg, port, key, stats)
                    client.send({"subscribe": {"page": "todos", "filter": "", "todo": None}})
                    clients.append(client)
                await asyncio.wait_for(asyncio.gather(*(c.subscribed for c in clients)), 30)
                await asyncio.sleep(1.0)  # let every consumer settle
                stats.update(messages=0, ids=0, fetches=0, errors=0, fetch_ms=[])
                pipe.send("connected")
            elif command == "stats":
                pipe.send(dict(stats, fetch_ms=list(stats.get("fetch_ms", ()))))
            elif command == "disconnect":
                await asyncio.sleep(1.0)  # the tail: messages and fetches still in flight
                final = dict(stats, fetch_ms=list(stats.get("fetch_ms", ())))
                for client in clients:
                    client.close()
                clients = []
                await asyncio.sleep(0.2)
                pipe.send(final)
            elif command == "stop":
                pipe.send("stopped")
                return

    asyncio.run(main())


class Dashboards:
    """The parent's handle on the dashboards' process."""

    def __init__(self, port: int, session_keys: list[str]):
        ctx = multiprocessing.get_context("spawn")
        self.pipe, child = ctx.Pipe()
        self.process = ctx.Process(target=dashboards_main, args=(port, session_keys, child), daemon=True)
        self.process.start()

    def call(self, command: str, arg=None, timeout: float = 120):
        self.pipe.send((command, arg))
        if not self.pipe.poll(timeout):
            raise RuntimeError(f"the dashboards did not answer {command!r} within {timeout} s")
        return self.pipe.recv()

    def cpu_seconds(self) -> float:
        import psutil

        t = psutil.Process(self.process.pid).cpu_times()
        return t.user + t.system

    def stop(self) -> None:
        try:
            self.call("stop", timeout=20)
        finally:
            self.process.join(timeout=10)
            if self.process.is_alive():
                self.process.kill()


# --- one round --------------------------------------------------------------------------------


@dataclass
class Run:
    mode: str
    n: int
    seconds: float
    db_cpu: float | None
    drain_cpu: float | None
    board_cpu: float
    dashboards_cpu: float
    stats: dict = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("nan")


def drain_watched(conninfo: str, scope, server, dashboards: Dashboards, mode: str, n: int, k: int) -> Run:
    """Load ``n`` todos, connect the dashboards (``mode``), drain with ``k`` threads, verify."""
    with connect(conninfo) as conn:
        create_todos(conn, scope, n, queue=QUEUE)
    systems._prepare_common(conninfo, ("todos", "todo_attempts"))
    if mode != "none":
        dashboards.call("connect", mode)
    board0 = server.cpu_seconds()
    dash0 = dashboards.cpu_seconds()
    seconds, gang = systems._timed_gang(
        conninfo, systems.store_worker, k, (conninfo, scope, 1, None), "threads", "SELECT max(completed_at) FROM todos"
    )
    board1 = server.cpu_seconds()
    dash1 = dashboards.cpu_seconds()
    stats = dashboards.call("disconnect") if mode != "none" else {}
    systems.verify_store(conninfo, n)
    clear_todos(conninfo)
    cost = gang.extra[-1]
    return Run(mode, n, seconds, cost["server_cpu"], cost["client_cpu"], board1 - board0, dash1 - dash0, stats)


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 4_000)
    parser.add_argument("--k", type=int, default=K, help="drain workers (default 8)")
    parser.add_argument("--clients", type=int, default=10, help="dashboards (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the order (default 2)")
    parser.add_argument(
        "--watchers",
        default=",".join(MODES),
        help=f"comma-separated, from {', '.join(MODES + UNTHROTTLED)} (the last two: live.js before its region throttle)",
    )
    args = parser.parse_args(argv)
    n = 300 if args.smoke else args.n
    modes = [m.strip() for m in args.watchers.split(",") if m.strip()]
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, list[Run]] = {}
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler() as load:
        runs = run_watching_in(conninfo, n, args.k, args.clients, modes, args.rounds)
        for run in runs:
            results.setdefault(run.mode, []).append(run)
    report(results, n, args, load.summary())
    return 0


def run_watching_in(
    conninfo: str, n: int, k: int, clients: int, modes: list[str], rounds: int, *, log=None
) -> list[Run]:
    """Every round of every mode in an existing database (the smoke test's entry)."""
    from bench.live_latency import make_humans

    log = log or (lambda line: print(line, flush=True))
    with connect(conninfo) as conn:
        scope, _token, team_id = vend_agent(conn, (QUEUE,))
    keys = make_humans(team_id, clients)
    server = start_board(conninfo)
    dashboards = Dashboards(server.port, keys)
    runs: list[Run] = []
    try:
        # Start the server's LISTEN connection (as any server that has served a dashboard has),
        # so "none" measures a listening server with no sockets, not a server that never listened.
        dashboards.call("connect", "sockets")
        dashboards.call("disconnect")
        for r in range(rounds):
            order = modes if r % 2 == 0 else list(reversed(modes))
            for mode in order:
                run = drain_watched(conninfo, scope, server, dashboards, mode, n, k)
                runs.append(run)
                s = run.stats
                log(
                    f"round {r + 1}: {mode:<8} {run.rate:>6,.0f} jobs/s ({run.seconds:.2f} s); CPU ms/job: drain "
                    f"{_ms(run.drain_cpu, n)}, PostgreSQL {_ms(run.db_cpu, n)}, Board {_ms(run.board_cpu, n)}, "
                    f"dashboards {_ms(run.dashboards_cpu, n)}; messages {s.get('messages', 0):,}, fetches "
                    f"{s.get('fetches', 0):,}; load {load_average()}"
                )
    finally:
        dashboards.stop()
        server.stop()
    return runs


def _ms(seconds: float | None, n: int) -> str:
    return "n/a" if seconds is None else f"{seconds / n * 1000:.2f}"


def report(results: dict[str, list[Run]], n: int, args, load: str) -> None:
    rate = {mode: statistics.median(r.rate for r in runs) for mode, runs in results.items()}
    base = rate.get("none")
    rows = []
    for mode, runs in results.items():

        def med(attr):
            values = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
            return statistics.median(values) if values else None

        fetch_ms = [x for r in runs for x in r.stats.get("fetch_ms", ())]
        seconds = statistics.median(r.seconds for r in runs)
        messages = statistics.median(r.stats.get("messages", 0) for r in runs)
        fetches = statistics.median(r.stats.get("fetches", 0) for r in runs)
        errors = sum(r.stats.get("errors", 0) for r in runs)
        rows.append(
            [
                mode,
                len(runs),
                rate[mode],
                " ".join(f"{r.rate:,.0f}" for r in runs),
                f"{rate[mode] / base:.2f}x" if base else "—",
                f"{messages / args.clients / seconds:.1f}" if mode != "none" else "—",
                f"{fetches / seconds:.0f}" if mode not in ("none", "sockets") else "—",
                f"{percentile(fetch_ms, 50):.0f} / {percentile(fetch_ms, 95):.0f}" if fetch_ms else "—",
                errors if mode != "none" else "—",
                _ms(med("drain_cpu"), n),
                _ms(med("db_cpu"), n),
                _ms(med("board_cpu"), n),
                _ms(med("dashboards_cpu"), n) if mode != "none" else "—",
            ]
        )
    print_table(
        [
            "dashboards",
            "rounds",
            "jobs/s (median)",
            "jobs/s per round",
            "vs none",
            "messages/s per client",
            "fragment GETs/s (all clients)",
            "GET ms p50/p95",
            "GET errors",
            "drain CPU ms/job",
            "PostgreSQL CPU ms/job",
            "Board CPU ms/job",
            "dashboards CPU ms/job",
        ],
        rows,
        title=f"Drain (store, row at a time, N={n:,}, K={args.k} threads) with {args.clients} Board dashboards "
        f"watching; load average during the run {load}",
    )
    if base and "sockets" in rate:
        value = rate["sockets"] / base
        print(f"\nsockets / none = {value:.2f}x (target >= 0.95x: {'met' if value >= 0.95 else 'NOT met'})")


if __name__ == "__main__":
    sys.exit(main())

"""The drain over HTTP, beside the same drain in-process.

    uv run --group bench python -m bench.http_drain                      # N=4,000, 2 rounds
    uv run --group bench python -m bench.http_drain --systems store,http,store-batch,http-batch
    uv run --group bench python -m bench.http_drain --systems store,client,store-batch,client-batch --anatomy 0
    uv run --group bench python -m bench.http_drain --systems http --rounds 1 --profile
    uv run --group bench python -m bench.http_drain --smoke

Same burn-down as ``bench/drain.py``: N todos pre-created through the store (not timed), then
``VACUUM (ANALYZE)`` and ``CHECKPOINT``; K = 8 workers released together; the time is the server
clock at the release → the latest ``completed_at``; afterwards every run is verified in SQL (all N
done exactly once, one closed attempt each, the lifecycle invariant) by ``systems.verify_store``.

Systems, alternating order between rounds, all in one database behind one Board server
(``daphne board.asgi:application`` in a subprocess; the tables are emptied between runs):

* ``store`` / ``store-batch``: the in-process drain of ``bench/drain.py`` (K threads on their own
  psycopg connections: claim_next → complete, or claim_batch max=10 → complete_batch);
* ``http`` / ``http-batch``: K worker *processes*, each an ``httpx.Client`` with keep-alive, to
  ``POST /api/v1/claim_next`` → ``/complete``, or ``/claim_batch {"max": 10}`` → ``/complete_batch``;
* ``client`` / ``client-batch``: K processes through the Python client (``clients/python``):
  ``board_client.Worker`` with a handler that does nothing (each report carries ``next``: one
  request per job; each handles N/K todos), or ``Client.claim_batch(10)`` → ``complete_batch``;

The API used to go through Django's handler; ``todos/agents/api/fast_path.py`` serves it straight from
ASGI now (bench/README.md, "Over HTTP", has the side-by-side figures from when both existed).

Where the time goes: CPU per job of the workers, the Board server and PostgreSQL; the latency of
each request as the workers saw it; ``--profile`` samples the Board server with py-spy during an
extra HTTP drain and sorts the samples by layer; ``--anatomy`` times one request's parts one at a
time (auth lookup, statement, JSON and validation, Django's stack in-process, the wire).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

from bench import systems
from bench.common import (
    base_parser,
    bench_server,
    check,
    connect,
    create_todos,
    print_table,
    setup_django,
    store_database,
)
from bench.serving import LoadSampler, clear_todos, load_average, percentile, start_board, vend_agent

K = 8
QUEUE = "bench"
ALL_SYSTEMS = ("store", "http", "client", "store-batch", "http-batch", "client-batch")
VARIANT_LABELS = {"board": "Board as is: API fast path"}
# The Board servers a run can drain against (a variant is ``<system>@<server>``).
SERVERS: dict[str, dict] = {"board": {}}


# --- the HTTP worker (a spawned process) ------------------------------------------------------


def http_worker(index: int, barrier, url: str, token: str, batch: int) -> dict:
    """One agent over HTTP: its own process, one keep-alive connection, the verbs a real agent
    calls. Returns what it completed, when, its CPU, and every request's latency (ms)."""
    import httpx

    def post(client, verb: str, body: dict) -> dict:
        response = client.post(f"/api/v1/{verb}", json=body)
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{verb}: HTTP {response.status_code}: {response.text[:300]}")
        return response.json()

    done, last = 0, None
    claims: list[float] = []
    completes: list[float] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
        post(client, "get_default_lease", {})  # opens the connection (and warms the server's pools)
        systems.start(barrier)
        cpu0 = time.process_time()
        clock = time.perf_counter
        while True:
            t0 = clock()
            if batch == 1:
                got = post(client, "claim_next", {"queue": QUEUE})
                t1 = clock()
                claims.append((t1 - t0) * 1000)
                if got["empty"]:
                    break
                post(client, "complete", {"id": got["todo"]["id"]})
                completes.append((clock() - t1) * 1000)
                done += 1
            else:
                got = post(client, "claim_batch", {"queue": QUEUE, "max": batch})
                t1 = clock()
                claims.append((t1 - t0) * 1000)
                if not got["todos"]:
                    break
                out = post(client, "complete_batch", {"items": [{"id": c["todo"]["id"]} for c in got["todos"]]})
                completes.append((clock() - t1) * 1000)
                done += sum(1 for r in out["results"] if r["ok"])
            last = time.monotonic()
        cpu = time.process_time() - cpu0
    return {"done": done, "last": last, "cpu": cpu, "claims": claims, "completes": completes}


# --- the Python client's worker (a spawned process) --------------------------------------------


def client_worker(index: int, barrier, url: str, token: str, batch: int, quota: int) -> dict:
    """One agent through ``board_client``: row at a time, the real ``Worker`` (a handler that does
    nothing; each report carries ``next``: one request per job) until it has handled ``quota``
    todos; batched, ``Client.claim_batch`` → ``complete_batch`` until the queue is empty. Its CPU
    is the whole process's (every thread: slots, heartbeats, httpx)."""
    import logging

    from board_client import Client, Worker

    logging.getLogger("httpx").setLevel(logging.WARNING)
    done, last = 0, None
    client = Client(url, token, retries=0, timeout=120)
    client.get_default_lease()  # opens the connection (and warms the server's pools)
    systems.start(barrier)
    cpu0 = time.process_time()
    if batch == 1:
        worker = Worker(url, token, client=client, wait_seconds=1, fence=False, claimant=f"bench-{index}")
        worker.add_handler(QUEUE, lambda job: None)
        status = worker.run(max_todos=quota)
        if status:
            raise RuntimeError(f"the worker was refused: {worker.fatal}")
        done = sum(1 for o in worker.outcomes if o.verdict == "completed")
        last = time.monotonic()
    else:
        while claims := client.claim_batch(batch, queue=QUEUE):
            results = client.complete_batch([{"id": c["todo"]["id"]} for c in claims])
            done += sum(1 for r in results if r["ok"])
            last = time.monotonic()
    cpu = time.process_time() - cpu0
    client.close()
    return {"done": done, "last": last, "cpu": cpu, "claims": [], "completes": []}


# --- one run ----------------------------------------------------------------------------------


@dataclass
class Run:
    system: str
    n: int
    seconds: float
    db_cpu: float | None  # PostgreSQL (all backends)
    client_cpu: float | None  # the workers (threads' CPU in-process; the processes' over HTTP)
    board_cpu: float | None = None  # the Board server process (HTTP only)
    requests: int = 0
    claims: list[float] = field(default_factory=list)
    completes: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("nan")


def drain_http_in(
    conninfo: str, server, scope, token: str, n: int, k: int, *, batch: int = 1, label: str = "http"
) -> Run:
    """Load ``n`` todos for ``scope``, drain them over HTTP with ``k`` processes, verify."""
    with connect(conninfo) as conn:
        create_todos(conn, scope, n, queue=QUEUE)
    systems._prepare_common(conninfo, ("todos", "todo_attempts"))
    board0 = server.cpu_seconds()
    if label.startswith("client"):
        target, args = client_worker, (server.url, token, batch, n // k)
        check(n % k == 0, f"{label}: N ({n}) must be a multiple of K ({k}): each worker handles N/K")
    else:
        target, args = http_worker, (server.url, token, batch)
    seconds, gang = systems._timed_gang(conninfo, target, k, args, "processes", "SELECT max(completed_at) FROM todos")
    board1 = server.cpu_seconds()
    systems.verify_store(conninfo, n)
    check(gang.total == n, f"{label}: workers completed {gang.total}, expected {n}")
    workers = gang.extra[:k]
    claims = [x for w in workers for x in w["claims"]]
    completes = [x for w in workers for x in w["completes"]]
    cost = gang.extra[-1]
    return Run(
        label,
        n,
        seconds,
        cost["server_cpu"],
        cost["client_cpu"],
        board1 - board0,
        len(claims) + len(completes),
        claims,
        completes,
    )


def drain_store(conninfo: str, n: int, k: int, *, batch: int, label: str) -> Run:
    out = systems.drain_store_in(conninfo, n, k, mode="threads", batch=batch, label=label)
    return Run(label, n, out.seconds, out.server_cpu, out.client_cpu)


# --- where the time goes: py-spy --------------------------------------------------------------

# Layers, matched from the innermost frame outwards: the first frame that names one decides.
LAYERS = (
    ("psycopg: send the statement, read and decode rows", ("psycopg",)),
    ("JSON encode/decode", ("json/",)),
    (
        "Board API code (parse, validate, serialize, verbs)",
        ("todos/agents/api/", "todos/core/store/", "todos/core/selectors/", "todos/core/db.py"),
    ),
    ("asgiref: sync↔async thread hops", ("asgiref/",)),
    ("Django middleware", ("django/middleware/", "django/contrib/", "whitenoise/", "django_htmx/", "board/middleware")),
    ("Django request/response, URLs, handler", ("django/",)),
    ("daphne/twisted: HTTP parsing, sockets", ("daphne/", "twisted/", "autobahn/")),
    ("asyncio event loop", ("asyncio/",)),
    ("threads, executors", ("threading.py", "concurrent/")),
)


def py_spy() -> list[str]:
    import shutil

    found = shutil.which("py-spy")
    return [found] if found else ["uvx", "py-spy"]


def profile_layers(raw_path: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]], int]:
    """Sort py-spy's collapsed stacks (``frame;frame;… count``) into LAYERS; also the hottest
    leaf functions. Returns (layers, leaves, total samples)."""
    layers: dict[str, int] = {}
    leaves: dict[str, int] = {}
    total = 0
    with open(raw_path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            n = int(count)
            total += n
            frames = stack.split(";")
            leaves[frames[-1]] = leaves.get(frames[-1], 0) + n
            layer = "other (interpreter, imports, GC)"
            for frame in reversed(frames):
                hit = next((name for name, marks in LAYERS if any(m in frame for m in marks)), None)
                if hit:
                    layer = hit
                    break
            layers[layer] = layers.get(layer, 0) + n
    return (sorted(layers.items(), key=lambda kv: -kv[1]), sorted(leaves.items(), key=lambda kv: -kv[1])[:12], total)


def profiled_drain(conninfo: str, server, scope, token: str, n: int, k: int, batch: int, out: str) -> Run:
    """An extra HTTP drain (not in the table: the sampler takes CPU too) with py-spy on the server,
    sampling only the thread that holds the GIL: where the Python CPU goes, not who waits."""
    spy = subprocess.Popen(
        [
            *py_spy(),
            "record",
            "--pid",
            str(server.pid),
            "--rate",
            "250",
            "--gil",
            "--format",
            "raw",
            "--output",
            out,
            "--nonblocking",
            "--duration",
            "600",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(2.0)
    try:
        run = drain_http_in(
            conninfo,
            server,
            scope,
            token,
            n,
            k,
            batch=batch,
            label=f"{'http-batch' if batch > 1 else 'http'} (profiled)",
        )
    finally:
        spy.send_signal(2)  # SIGINT: py-spy writes what it has
        try:
            spy.wait(timeout=60)
        except subprocess.TimeoutExpired:
            spy.kill()
    clear_todos(conninfo)
    return run


# --- where the time goes: one request, part by part -------------------------------------------


def _asgi_scope(path: str, token: str, body: bytes) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {token}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def _asgi_post(app, verb: str, token: str, payload: dict) -> dict:
    """One request through an ASGI app in this process: no socket, no HTTP parsing."""
    import json

    body = json.dumps(payload).encode()
    first = True
    never = asyncio.get_running_loop().create_future()
    out: dict = {"body": b""}

    async def receive():
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await never  # the client never hangs up

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        else:
            out["body"] += message.get("body", b"")

    await app(_asgi_scope(f"/api/v1/{verb}", token, body), receive, send)
    if out.get("status") not in (200, 201):
        raise RuntimeError(f"{verb}: {out.get('status')} {out['body'][:200]!r}")
    return json.loads(out["body"])


class Parts:
    """Per part and verb: wall-clock milliseconds of each request, and CPU milliseconds (this
    process's, or the Board server's for requests over HTTP)."""

    def __init__(self):
        self.wall: dict[tuple[str, str], list[float]] = {}
        self.cpu: dict[tuple[str, str], list[float]] = {}

    def add(self, part: str, verb: str, wall: float, cpu: float) -> None:
        self.wall.setdefault((part, verb), []).append(wall * 1000)
        self.cpu.setdefault((part, verb), []).append(cpu * 1000)

    def median(self, part: str, verb: str) -> float:
        return statistics.median(self.wall[(part, verb)])

    def mean_cpu(self, part: str, verb: str) -> float:
        return statistics.fmean(self.cpu[(part, verb)])

    def parts(self) -> list[str]:
        return list(dict.fromkeys(part for part, _ in self.wall))


AUTH, STATEMENT, PYTHON = "auth lookup (SELECT by token hash)", "the statement", "JSON parse + validation + serialize"


async def _anatomy(scope, token: str, servers: dict, m: int) -> Parts:
    """Each part of a claim_next and a complete, ``m`` times, in turn (no concurrency): the auth
    lookup, the statement and the JSON work on their own; the whole request through each ASGI app
    in this process (no socket); the whole request over HTTP to each server."""
    import httpx

    from todos.agents.api import serialize
    from todos.agents.api.fast_path import AgentApiFastPath
    from todos.agents.api.http import json_response, parse_arguments
    from todos.agents.api.validation import validate
    from todos.agents.api.verbs import VERBS
    from todos.core.db import aexecute
    from todos.core.selectors.agent_api import credential_for
    from todos.core.store import agent as store
    from todos.core.store.endpoints import token_hash

    apps = {"board": AgentApiFastPath(None)}
    clients = {
        name: httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {token}"})
        for name, server in servers.items()
    }
    parts = Parts()
    wall, cpu = time.perf_counter, time.process_time

    async def timed(part: str, verb: str, coro, server=None):
        w0, c0 = wall(), (server.cpu_seconds() if server else cpu())
        out = await coro
        w1 = wall()
        parts.add(part, verb, w1 - w0, (server.cpu_seconds() if server else cpu()) - c0)
        return out

    async def plain(fn):
        return fn()

    for client in clients.values():  # open the connections
        await client.post("/api/v1/get_default_lease", json={})
    for app in apps.values():
        await _asgi_post(app, "get_default_lease", token, {})
    for _ in range(m):
        for verb in ("claim_next", "complete"):
            await timed(AUTH, verb, aexecute(credential_for(token_hash(token))))
        found = await timed(STATEMENT, "claim_next", aexecute(store.claim_next(scope, queue=QUEUE)))
        await timed(STATEMENT, "complete", aexecute(store.complete(scope, found.todo.id)))
        await timed(
            PYTHON,
            "claim_next",
            plain(
                lambda: (
                    validate(VERBS["claim_next"].input, parse_arguments(b'{"queue": "bench"}')),
                    json_response({"empty": False, **serialize.claim(found)}, 200, "x").content,
                )
            ),
        )
        await timed(
            PYTHON,
            "complete",
            plain(
                lambda: (
                    validate(VERBS["complete"].input, parse_arguments((f'{{"id": "{found.todo.id}"}}').encode())),
                    json_response({"todo": serialize.todo_row(found.todo)}, 200, "x").content,
                )
            ),
        )
        for name, app in apps.items():
            part = f"whole request in-process ({VARIANT_LABELS[name]})"
            got = await timed(part, "claim_next", _asgi_post(app, "claim_next", token, {"queue": QUEUE}))
            await timed(part, "complete", _asgi_post(app, "complete", token, {"id": got["todo"]["id"]}))
        for name, client in clients.items():
            part = f"whole request over HTTP ({VARIANT_LABELS[name]}; CPU = the server's)"
            response = await timed(
                part, "claim_next", client.post("/api/v1/claim_next", json={"queue": QUEUE}), servers[name]
            )
            await timed(
                part,
                "complete",
                client.post("/api/v1/complete", json={"id": response.json()["todo"]["id"]}),
                servers[name],
            )
    for client in clients.values():
        await client.aclose()
    return parts


def anatomy(conninfo: str, scope, token: str, servers: dict, m: int) -> Parts:
    per_round = 1 + 1 + len(servers)  # claims per round: the statement, the in-process app, each server
    with connect(conninfo) as conn:
        create_todos(conn, scope, m * per_round, queue=QUEUE)
    systems._prepare_common(conninfo, ("todos", "todo_attempts"))
    try:
        return asyncio.run(_anatomy(scope, token, servers, m))
    finally:
        clear_todos(conninfo)


def print_anatomy(p: Parts, m: int) -> None:
    verbs = ("claim_next", "complete")
    rows = [
        [part, *(f"{p.median(part, v):.2f}" for v in verbs), *(f"{p.mean_cpu(part, v):.2f}" for v in verbs)]
        for part in p.parts()
    ]
    own = {v: sum(p.mean_cpu(part, v) for part in (AUTH, STATEMENT, PYTHON)) for v in verbs}
    for name in VARIANT_LABELS:
        whole = f"whole request in-process ({VARIANT_LABELS[name]})"
        if (whole, "complete") not in p.cpu:
            continue
        rows.append(
            [
                f"= Django's handler, middleware, thread hops ({VARIANT_LABELS[name]})",
                "",
                "",
                *(f"{p.mean_cpu(whole, v) - own[v]:.2f}" for v in verbs),
            ]
        )
        wire = f"whole request over HTTP ({VARIANT_LABELS[name]}; CPU = the server's)"
        if (wire, "complete") in p.cpu:
            rows.append(
                [
                    f"= daphne/twisted HTTP and the server's event loop ({VARIANT_LABELS[name]})",
                    "",
                    "",
                    *(f"{p.mean_cpu(wire, v) - p.mean_cpu(whole, v):.2f}" for v in verbs),
                ]
            )
    print_table(
        [
            "one request at a time",
            "claim_next wall ms (median)",
            "complete wall ms (median)",
            "claim_next CPU ms",
            "complete CPU ms",
        ],
        rows,
        title=f"Anatomy of a request: {m} of each, sequential; CPU is this process's (mean), or the server's "
        f"for requests over HTTP; '=' rows are differences of CPU",
    )


# --- the benchmark ----------------------------------------------------------------------------


def _cpu_ms(seconds: float | None, n: int) -> str:
    return "n/a" if seconds is None else f"{seconds / n * 1000:.2f}"


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 4_000)
    parser.add_argument("--k", type=int, default=K, help="workers (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the order (default 2)")
    parser.add_argument(
        "--systems",
        default=",".join(ALL_SYSTEMS),
        help="comma-separated: store, store-batch, http, http-batch, client, client-batch",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also: an extra HTTP drain per server with py-spy on it (needs py-spy: PATH or uvx)",
    )
    parser.add_argument(
        "--anatomy",
        type=int,
        default=200,
        metavar="M",
        help="time M sequential requests part by part (0: skip; default 200)",
    )
    args = parser.parse_args(argv)
    n = 200 if args.smoke else args.n
    if args.smoke:
        args.anatomy = min(args.anatomy, 5)
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, list[Run]] = {}
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler() as load:
        with connect(conninfo) as conn:
            scope, token, _ = vend_agent(conn, (QUEUE,))
        wanted = {"board"} | {s.partition("@")[2] for s in names if "@" in s}
        servers = {name: start_board(conninfo, label=name, **SERVERS[name]) for name in SERVERS if name in wanted}
        try:
            for server in servers.values():  # untimed: the first requests fill the server's pools
                drain_http_in(conninfo, server, scope, token, 16 * args.k, args.k, label="warm-up")
                clear_todos(conninfo)
            for r in range(args.rounds):
                order = names if r % 2 == 0 else list(reversed(names))
                for name in order:
                    base, _, variant = name.partition("@")
                    batch = 10 if base.endswith("-batch") else 1
                    if base.startswith("store"):
                        run = drain_store(conninfo, n, args.k, batch=batch, label=name)
                    else:
                        run = drain_http_in(
                            conninfo, servers[variant or "board"], scope, token, n, args.k, batch=batch, label=name
                        )
                    clear_todos(conninfo)
                    results.setdefault(name, []).append(run)
                    print(
                        f"round {r + 1}: {name:<18} {run.rate:>7,.0f} jobs/s ({run.seconds:.2f} s); CPU ms/job: "
                        f"workers {_cpu_ms(run.client_cpu, n)}, Board {_cpu_ms(run.board_cpu, n)}, "
                        f"PostgreSQL {_cpu_ms(run.db_cpu, n)}; load {load_average()}",
                        flush=True,
                    )
            profiles = {}
            if args.profile:
                for name, server in servers.items():
                    out = f"/tmp/board-bench-http-profile-{name}.txt"
                    run = profiled_drain(conninfo, server, scope, token, n, args.k, 1, out)
                    print(f"profiled run ({name}): {run.rate:,.0f} jobs/s (py-spy sampling the server)", flush=True)
                    profiles[name] = profile_layers(out)
            parts = anatomy(conninfo, scope, token, servers, args.anatomy) if args.anatomy else None
        finally:
            for s in servers.values():
                s.stop()

    rate = {name: statistics.median(r.rate for r in runs) for name, runs in results.items()}
    rows = []
    for name, runs in results.items():

        def med(attr):
            values = [getattr(r, attr) for r in runs if getattr(r, attr) is not None]
            return statistics.median(values) if values else None

        claims = [x for r in runs for x in r.claims]
        completes = [x for r in runs for x in r.completes]
        lat = (
            (
                f"{percentile(claims, 50):.1f} / {percentile(claims, 95):.1f}",
                f"{percentile(completes, 50):.1f} / {percentile(completes, 95):.1f}",
            )
            if claims
            else ("—", "—")
        )
        rows.append(
            [
                name,
                n,
                len(runs),
                statistics.median(r.seconds for r in runs),
                rate[name],
                " ".join(f"{r.rate:,.0f}" for r in runs),
                _cpu_ms(med("client_cpu"), n),
                _cpu_ms(med("board_cpu"), n) if med("board_cpu") is not None else "—",
                _cpu_ms(med("db_cpu"), n),
                *lat,
            ]
        )
    print_table(
        [
            "system",
            "N",
            "rounds",
            "seconds (median)",
            "jobs/s (median)",
            "jobs/s per round",
            "workers CPU ms/job",
            "Board CPU ms/job",
            "PostgreSQL CPU ms/job",
            "claim ms p50/p95",
            "complete ms p50/p95",
        ],
        rows,
        title=f"Drain over HTTP vs in-process: N={n:,}, K={args.k}; HTTP workers are processes, "
        f"in-process workers threads; load average during the runs {load.summary()}",
    )
    ratio_rows = []
    for a, b in (
        ("http", "store"),
        ("http-batch", "store-batch"),
        ("http-batch", "http"),
        ("client", "store"),  # target in bench/README.md: >= 0.5x
        ("client-batch", "store-batch"),  # target in bench/README.md: >= 0.6x
        ("client", "http"),
    ):
        if a in rate and b in rate:
            ratio_rows.append([f"{a} / {b}", f"{rate[a] / rate[b]:.2f}x"])
    if ratio_rows:
        print_table(["ratio (throughput, same run)", "measured"], ratio_rows)
    for name, (layers, leaves, total) in profiles.items():
        print_table(
            ["Board server samples holding the GIL, by layer (py-spy, innermost match)", "share"],
            [[layer, f"{count / total:.0%}"] for layer, count in layers],
            title=f"Profile of the server ({VARIANT_LABELS[name]}) during an HTTP row-at-a-time drain "
            f"({total:,} samples)",
        )
        print_table(
            ["hottest leaf functions", "share"], [[leaf[:110], f"{count / total:.1%}"] for leaf, count in leaves]
        )
    if parts:
        print_anatomy(parts, args.anatomy)
    return 0


if __name__ == "__main__":
    sys.exit(main())

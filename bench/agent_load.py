"""The agent path as agents use it, open loop: a step series of offered rates until saturation.

    uv run --group bench python -m bench.agent_load                       # 50,100,200,400 jobs/s, 20 s steps
    uv run --group bench python -m bench.agent_load --rates 25,50,75,100,150 --step-seconds 30
    uv run --group bench python -m bench.agent_load --rates 100,100,100,100 --held-transaction 2
    uv run --group bench python -m bench.agent_load --rates 50,100 --readers 4
    uv run --group bench python -m bench.agent_load --rates 50,100 --terminate
    uv run --group bench python -m bench.agent_load --peer procrastinate --held-transaction
    uv run --group bench python -m bench.agent_load --smoke

A Board server as deployed (``daphne board.asgi:application`` in its own process, its relay
included, as ``bench/serving.py`` starts it) on a fresh database, and two more processes:

* the **producer**: one ``POST /api/v1/create_for`` per todo, open loop (``bench/open_loop.py``): the
  i-th create of a step leaves at its scheduled time whether the earlier ones were answered or not,
  each on a connection of its own keep-alive pool, up to ``--max-in-flight`` at once (a create due
  while the cap is full is shed). The payload carries the producer's send time (``time.time()``);
* the **workers**: K agents (``--k``, 16), each on its own keep-alive connection, looping
  ``claim_next`` with ``wait_seconds`` 2 → ``complete``, retrying a ``complete`` after a 5xx as
  ``board_client.Worker`` does.

Both (``bench/load_clients.py``) speak HTTP through ``bench/http_client.py`` (asyncio streams: the
load generator shares two cores with what it measures, so it must be cheap; its CPU is reported).
Each step offers one rate for ``--warmup-seconds`` (not measured) and then ``--step-seconds``
(measured); at the edges of each measured window this process reads the counters, the CPU of the
server, of PostgreSQL and of the load generator (``/proc``), and the hot tables' statistics. Afterwards, from the database:
the completions inside each window (``completed_at`` between the window's edges, server clock) and
each todo's wait from ``created_at`` to its first attempt's ``claimed_at``. Faults
(``--held-transaction``, ``--readers``, ``--terminate``: ``bench/db_faults.py``) run beside the
steps. ``--peer procrastinate`` runs the same open-loop shape against procrastinate in-library
(``defer_async`` → a worker with K slots) in a fresh database of the same server.

bench/README.md ("The agent path under load") says how to read the table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import multiprocessing
import queue as queue_module
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, LiteralString

import psycopg

from bench.common import (
    bench_server,
    connect,
    fresh_database,
    one_row,
    print_table,
    server_cpu_seconds,
    setup_django,
)
from bench.common import store_database as board_database
from bench.db_faults import HeldTransaction, Readers, Terminator, table_stats
from bench.load_clients import (
    QUEUE,
    board_producer,
    board_workers,
    peer_producer,
    peer_schema,
    peer_workers,
)
from bench.open_loop import PRODUCER_COUNTERS, WORKER_COUNTERS, Counters, Plan
from bench.serving import LoadSampler, load_average, start_board, vend_agent

# The Board server's pool connections are named so (libpq reads PGAPPNAME), the listener names its
# own: what --terminate kills. The relay's connection is spared: the counts and the change log
# keep moving, and what is measured is how the agent path answers.
BOARD_APP_NAME = "board-under-load"
TERMINATED_NAMES = (BOARD_APP_NAME, "board-live-listener")
SATURATED_BELOW = 0.9  # a step is saturated when it completes less than this share of what it offered


# --- what a system under load is, for the driver ---------------------------------------------


@dataclass
class Target:
    """A system under the load: its processes, its hot tables and how to read its results."""

    name: str
    conninfo: str
    producer: Callable[..., None]
    workers: Callable[..., None]
    args: tuple  # the first arguments of both processes
    tables: tuple[str, ...]
    backlog_sql: LiteralString  # → n: work waiting now
    completed_sql: LiteralString  # %(a)s, %(b)s → n: completions committed in [a, b) (server clock)
    latency_sql: LiteralString  # → (step, ms) per measured item; ms NULL: never claimed
    reader_sql: tuple[LiteralString, ...]
    server: Any = None  # bench.serving.BoardServer, whose CPU is "the server's"
    terminated_names: tuple[str, ...] = ()


BOARD_TABLES = (
    "todos",
    "todo_attempts",
    "change_log",
    "todo_counts",
    "todo_finished_minutes",
    "todo_flow",
    "relay_state",
)
BOARD_BACKLOG: LiteralString = "SELECT count(*) FROM todos WHERE state = 'pending'"
BOARD_COMPLETED: LiteralString = "SELECT count(*) FROM todos WHERE completed_at >= %(a)s AND completed_at < %(b)s"
BOARD_LATENCY: LiteralString = """
SELECT (t.payload->>'step')::int AS step,
       extract(epoch FROM coalesce(a.claimed_at, t.claimed_at) - t.created_at)::float8 * 1000 AS ms
FROM todos t LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = 1
WHERE (t.payload->>'measured')::boolean"""
BOARD_READERS: tuple[LiteralString, ...] = (
    "SELECT count(*) FROM todos",
    "SELECT state, sum(n) FROM todo_counts GROUP BY state",
    "SELECT count(*) FROM change_log",
)

PEER_TABLES = ("procrastinate_jobs", "procrastinate_events", "procrastinate_workers", "procrastinate_periodic_defers")
PEER_BACKLOG: LiteralString = "SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo'"
PEER_COMPLETED: LiteralString = (
    "SELECT count(*) FROM procrastinate_events WHERE type = 'succeeded' AND at >= %(a)s AND at < %(b)s"
)
PEER_LATENCY: LiteralString = """
SELECT (j.args->>'step')::int AS step,
       extract(epoch FROM (SELECT min(e.at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'started')
                        - (SELECT min(e.at) FROM procrastinate_events e WHERE e.job_id = j.id AND e.type = 'deferred')
       )::float8 * 1000 AS ms
FROM procrastinate_jobs j
WHERE (j.args->>'measured')::boolean"""
PEER_READERS: tuple[LiteralString, ...] = (
    "SELECT count(*) FROM procrastinate_jobs",
    "SELECT status, count(*) FROM procrastinate_jobs GROUP BY status",
    "SELECT count(*) FROM procrastinate_events",
)


# --- one run: the steps, measured ------------------------------------------------------------


@dataclass
class Snapshot:
    """Everything read at one edge of a measured window."""

    at: float  # time.monotonic()
    db_at: datetime  # the server's clock
    producer: dict[str, float]
    workers: dict[str, float]
    server_cpu: float | None
    pg_cpu: float | None
    loadgen_cpu: float
    tables: dict[str, dict]
    backlog: int
    killed: int


@dataclass
class Step:
    """One measured window of one system."""

    system: str
    rate: float
    fault: str
    seconds: float
    offered: float  # per second
    accepted: float  # per second
    completed: int  # committed inside the window (server clock)
    db_seconds: float
    backlog: int
    client_ms: tuple[float, float, float]
    db_ms: tuple[float, float, float]
    create_ms: tuple[float, float, float] | None  # the create's send → its answer (over HTTP)
    server_cpu: float | None  # seconds in the window
    pg_cpu: float | None
    loadgen_cpu: float
    requests: float | None  # HTTP requests in the window (None: in-library)
    dead_made: float  # row versions made dead in the window (updates + deletes), hot tables
    dead_left: float  # change of n_dead_tup over the window (what vacuum has not removed), hot tables
    s503: int
    s5xx: int
    refused: int
    shed: int
    late: int
    by_table: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def completed_rate(self) -> float:
        return self.completed / self.db_seconds if self.db_seconds > 0 else 0.0

    @property
    def saturated(self) -> bool:
        return self.completed_rate < SATURATED_BELOW * self.offered


@dataclass
class SystemRun:
    system: str
    steps: list[Step]
    killed: int = 0  # backends the terminator ended
    scans: int = 0  # reader transactions
    notes: list[str] = field(default_factory=list)


def _cpu(pids: Sequence[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
    return total


def _snapshot(conn: psycopg.Connection, target: Target, pc: Counters, wc: Counters, pids, terminator) -> Snapshot:
    at = time.monotonic()
    producer, workers, loadgen = pc.snapshot(), wc.snapshot(), _cpu(pids)
    server = target.server.cpu_seconds() if target.server is not None else None
    row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    backlog = conn.execute(target.backlog_sql).fetchone()
    return Snapshot(
        at=at,
        db_at=row[0],
        producer=producer,
        workers=workers,
        server_cpu=server,
        pg_cpu=server_cpu_seconds(conn),
        loadgen_cpu=loadgen,
        tables=table_stats(conn, target.tables),
        backlog=int(backlog[0]) if backlog else 0,
        killed=terminator.killed if terminator is not None else 0,
    )


def tail(samples: list[float], total: int, p: float) -> float:
    """Nearest-rank percentile over ``total`` items of which ``samples`` were measured; the others
    (never claimed by the end of the run) count as infinitely late. NaN for none."""
    n = max(total, len(samples))
    if n == 0:
        return math.nan
    rank = min(n - 1, max(0, round(p / 100 * (n - 1))))
    ordered = sorted(samples)
    return ordered[rank] if rank < len(ordered) else math.inf


def _tails(samples: list[float], total: int) -> tuple[float, float, float]:
    return (tail(samples, total, 50), tail(samples, total, 95), tail(samples, total, 99))


def _wait_ready(events, procs, results, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not all(e.is_set() for e in events):
        for p in procs:
            if not p.is_alive():
                raise RuntimeError(f"{p.name} exited ({p.exitcode}) before it was ready: {_errors(results)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the load's processes were not ready within {timeout:.0f} s")
        time.sleep(0.05)


def _errors(results) -> str:
    out = []
    with contextlib.suppress(queue_module.Empty):
        while True:
            kind, value = results.get(timeout=0.5)
            if kind == "error":
                out.append(value)
    return "\n".join(out) or "(no traceback)"


def _collect(results, procs, timeout: float) -> dict[str, Any]:
    got: dict[str, Any] = {}
    deadline = time.monotonic() + timeout
    while len(got) < 2:
        try:
            kind, value = results.get(timeout=1)
        except queue_module.Empty:
            if time.monotonic() > deadline or not any(p.is_alive() for p in procs):
                raise RuntimeError(f"the load's processes did not report: got {sorted(got)}") from None
            continue
        if kind == "error":
            raise RuntimeError(value)
        got[kind] = value
    return got


def _sleep_until(at: float) -> None:
    time.sleep(max(0.0, at - time.monotonic()))


def held_steps(opts: argparse.Namespace) -> int:
    """How many steps the held transaction lasts: ``--held-transaction N``, or half the steps."""
    if opts.held_transaction is None:
        return 0
    if opts.held_transaction > 0:
        return min(opts.held_transaction, len(opts.rates))
    return max(1, math.ceil(len(opts.rates) / 2))


def _fault(opts: argparse.Namespace, s: int, killed: int | None) -> str:
    parts = []
    held = held_steps(opts)
    if held:
        parts.append("held transaction" if s < held else "after the held transaction")
    if opts.readers:
        parts.append(f"{opts.readers} readers")
    if killed is not None:
        parts.append(f"terminate: {killed} killed")
    return ", ".join(parts) or "none"


def drive(target: Target, opts: argparse.Namespace, log: Callable[[str], None] = print) -> SystemRun:
    """Run the step series against ``target`` with the faults ``opts`` asks for; measure each step."""
    plan = Plan(tuple(opts.rates), opts.warmup_seconds, opts.step_seconds)
    ctx = multiprocessing.get_context("spawn")
    pc, wc = Counters(ctx, PRODUCER_COUNTERS), Counters(ctx, WORKER_COUNTERS)
    ready_p, ready_w, go, stop = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Event()
    t0 = ctx.RawValue("d", 0.0)
    results = ctx.Queue()
    producer = ctx.Process(
        target=target.producer,
        args=(*target.args, plan, opts.max_in_flight, pc, ready_p, go, t0, results),
        name=f"{target.name} producer",
        daemon=True,
    )
    workers = ctx.Process(
        target=target.workers,
        args=(*target.args, opts.k, opts.wait_seconds, wc, ready_w, stop, results),
        name=f"{target.name} workers",
        daemon=True,
    )
    procs = (producer, workers)
    held = terminator = None
    got: dict[str, Any] = {}
    run = SystemRun(target.name, [])
    edges: list[tuple[Snapshot, Snapshot]] = []
    for p in procs:
        p.start()
    try:
        _wait_ready((ready_p, ready_w), procs, results)
        pids = [p.pid for p in procs if p.pid is not None]
        terminating = opts.terminate and bool(target.terminated_names)
        with (
            psycopg.connect(target.conninfo, autocommit=True, application_name="bench-sampler") as conn,
            Readers(target.conninfo, opts.readers, target.reader_sql, opts.reader_pause)
            if opts.readers
            else contextlib.nullcontext() as readers,
            Terminator(target.conninfo, target.terminated_names)
            if terminating
            else contextlib.nullcontext() as terminator,
        ):
            if held_steps(opts):
                held = HeldTransaction(target.conninfo)
            t0.value = time.monotonic() + 0.2
            go.set()
            for s, rate in enumerate(plan.rates):
                start, end = plan.window(s)
                _sleep_until(t0.value + start)
                m = _snapshot(conn, target, pc, wc, pids, terminator)
                _sleep_until(t0.value + end)
                e = _snapshot(conn, target, pc, wc, pids, terminator)
                edges.append((m, e))
                if held is not None and s + 1 == held_steps(opts):
                    held.end()
                w = {name: e.workers[name] - m.workers[name] for name in WORKER_COUNTERS}
                log(
                    f"{target.name} {rate:g}/s: {w['completes'] / (e.at - m.at):.1f} completed/s (workers' "
                    f"count); claims {w['claim_requests']:.0f} ({w['empty']:.0f} empty), completes "
                    f"{w['complete_requests']:.0f}, 503 {w['s503']:.0f}, no answer {w['errors']:.0f}; "
                    f"backlog {e.backlog}; load {load_average()}"
                )
            # The last window's creates get time to be claimed (the earlier windows' have the next
            # steps): the workers go on until nothing waits, or for --drain-seconds at most.
            drained_by = time.monotonic() + opts.drain_seconds
            while time.monotonic() < drained_by and one_row(conn.execute(target.backlog_sql))[0] > 0:
                time.sleep(0.2)
            stop.set()
            got = _collect(results, procs, timeout=plan.seconds + 120)
            if readers is not None:
                run.scans = readers.scans
                run.notes += readers.errors
            if terminator is not None:
                run.killed = terminator.killed
                run.notes += terminator.errors
    finally:
        if held is not None:
            held.end()
        stop.set()
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    run.steps = _steps(target, opts, plan, edges, got["workers"], got.get("producer"), terminating)
    return run


def _steps(
    target: Target,
    opts,
    plan: Plan,
    edges,
    client: dict[int, list[float]],
    answered: dict[int, list[float]] | None,
    terminating: bool,
) -> list[Step]:
    """The per-step figures, from the window edges and (after the run) the database."""
    db_latency: dict[int, list[float]] = {}
    created: dict[int, int] = {}
    with connect(target.conninfo) as conn:
        for row in conn.execute(target.latency_sql).fetchall():
            created[row["step"]] = created.get(row["step"], 0) + 1
            if row["ms"] is not None:
                db_latency.setdefault(row["step"], []).append(row["ms"])
        completed = [
            one_row(conn.execute(target.completed_sql, {"a": m.db_at, "b": e.db_at}))["count"] for m, e in edges
        ]
    steps = []
    for s, ((m, e), done) in enumerate(zip(edges, completed)):
        seconds = e.at - m.at

        def delta(side: str, name: str) -> float:
            return getattr(e, side)[name] - getattr(m, side)[name]

        by_table = {}
        for table in target.tables:
            before, after = m.tables.get(table), e.tables.get(table)
            if before is None or after is None:
                continue
            by_table[table] = {
                "made": (after["upd"] - before["upd"]) + (after["del"] - before["del"]),
                "left": after["dead"] - before["dead"],
                "dead": after["dead"],
                "pages": after["pages"],
                "vacuums": after["vacuums"] - before["vacuums"],
            }
        http = target.server is not None
        requests = (
            delta("producer", "sent") + delta("workers", "claim_requests") + delta("workers", "complete_requests")
        )
        steps.append(
            Step(
                system=target.name,
                rate=plan.rates[s],
                fault=_fault(opts, s, e.killed - m.killed if terminating else None),
                seconds=seconds,
                offered=delta("producer", "scheduled") / seconds,
                accepted=delta("producer", "accepted") / seconds,
                completed=int(done),
                db_seconds=(e.db_at - m.db_at).total_seconds(),
                backlog=e.backlog,
                client_ms=_tails(client.get(s, []), created.get(s, 0)),
                db_ms=_tails(db_latency.get(s, []), created.get(s, 0)),
                create_ms=None if answered is None else _tails(answered.get(s, []), len(answered.get(s, []))),
                server_cpu=None if e.server_cpu is None or m.server_cpu is None else e.server_cpu - m.server_cpu,
                pg_cpu=None if e.pg_cpu is None or m.pg_cpu is None else e.pg_cpu - m.pg_cpu,
                loadgen_cpu=e.loadgen_cpu - m.loadgen_cpu,
                requests=requests if http else None,
                dead_made=sum(t["made"] for t in by_table.values()),
                dead_left=sum(t["left"] for t in by_table.values()),
                s503=int(delta("producer", "s503") + delta("workers", "s503")),
                s5xx=int(delta("producer", "s5xx") + delta("workers", "s5xx")),
                refused=int(
                    delta("producer", "refused")
                    + delta("producer", "errors")
                    + delta("workers", "refused")
                    + delta("workers", "errors")
                ),
                shed=int(delta("producer", "shed")),
                late=int(delta("producer", "late")),
                by_table=by_table,
            )
        )
    return steps


# --- the two systems --------------------------------------------------------------------------


def run_board_in(conninfo: str, opts: argparse.Namespace, log: Callable[[str], None] = print) -> SystemRun:
    """The load against a Board server on ``conninfo``'s database (migrated, as the smoke test's)."""
    with connect(conninfo) as conn:
        _, token, _ = vend_agent(conn, (QUEUE,))
    with start_board(conninfo, processes=opts.processes, PGAPPNAME=BOARD_APP_NAME) as server:
        target = Target(
            name="board",
            conninfo=conninfo,
            producer=board_producer,
            workers=board_workers,
            args=(server.port, token),
            tables=BOARD_TABLES,
            backlog_sql=BOARD_BACKLOG,
            completed_sql=BOARD_COMPLETED,
            latency_sql=BOARD_LATENCY,
            reader_sql=BOARD_READERS,
            server=server,
            terminated_names=TERMINATED_NAMES,
        )
        return drive(target, opts, log)


def run_peer_in(conninfo: str, opts: argparse.Namespace, log: Callable[[str], None] = print) -> SystemRun:
    """The same load against procrastinate in-library, in ``conninfo``'s (empty) database."""
    asyncio.run(peer_schema(conninfo))
    target = Target(
        name="procrastinate",
        conninfo=conninfo,
        producer=peer_producer,
        workers=peer_workers,
        args=(conninfo,),
        tables=PEER_TABLES,
        backlog_sql=PEER_BACKLOG,
        completed_sql=PEER_COMPLETED,
        latency_sql=PEER_LATENCY,
        reader_sql=PEER_READERS,
    )
    run = drive(target, opts, log)
    if opts.terminate:
        run.notes.append("--terminate applies to Board only: procrastinate ran without it")
    return run


# --- the report --------------------------------------------------------------------------------

COLUMNS = (
    "system",
    "offered rate",
    "fault",
    "offered/s",
    "accepted/s",
    "completed/s",
    "backlog at end",
    "claim ms p50/p95/p99 (client)",
    "claim ms p50/p95/p99 (database)",
    "create answer ms p50/p95/p99",
    "server CPU ms/job",
    "PostgreSQL CPU ms/job",
    "load generator CPU ms/job (cores)",
    "requests/job",
    "dead tuples/job made",
    "dead tuples/job left",
    "503",
    "other 5xx",
    "refused/shed/late",
)


def _ms(v: float) -> str:
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞"
    return f"{v:.1f}" if v < 10 else f"{v:,.0f}"


def _per_job(value: float | None, jobs: int, scale: float = 1.0, digits: int = 2) -> str:
    if value is None or jobs <= 0:
        return "—"
    return f"{value * scale / jobs:.{digits}f}"


def step_row(st: Step) -> list[str]:
    http = st.requests is not None
    return [
        st.system,
        f"{st.rate:g}",
        st.fault,
        f"{st.offered:.1f}",
        f"{st.accepted:.1f}" if http else "—",
        f"{st.completed_rate:.1f}",
        f"{st.backlog:,}",
        " / ".join(_ms(v) for v in st.client_ms),
        " / ".join(_ms(v) for v in st.db_ms),
        " / ".join(_ms(v) for v in st.create_ms) if st.create_ms is not None else "—",
        _per_job(st.server_cpu, st.completed, 1000),
        _per_job(st.pg_cpu, st.completed, 1000),
        f"{_per_job(st.loadgen_cpu, st.completed, 1000)} ({st.loadgen_cpu / st.seconds:.2f})",
        _per_job(st.requests, st.completed, digits=1),
        _per_job(st.dead_made, st.completed, digits=1),
        _per_job(st.dead_left, st.completed, digits=1),
        f"{st.s503:,}" if http else "—",
        f"{st.s5xx:,}" if http else "—",
        f"{st.refused:,} / {st.shed:,} / {st.late:,}",
    ]


def verdicts(run: SystemRun) -> list[str]:
    """One line per step (saturated or not), then the saturation rate and what the highest offered
    rate completed against it."""
    lines = []
    for st in run.steps:
        share = st.completed_rate / st.offered if st.offered else math.nan
        mark = "SATURATED" if st.saturated else "keeps up"
        lines.append(
            f"{run.system} at {st.rate:g}/s offered ({st.fault}): completed {st.completed_rate:.1f}/s = "
            f"{share:.2f} × offered: {mark}"
        )
    if not run.steps:
        return lines
    peak = max(run.steps, key=lambda st: st.completed_rate)
    highest = max(enumerate(run.steps), key=lambda item: (item[1].rate, item[0]))[1]
    first = next((st for st in run.steps if st.saturated), None)
    if first is None:
        lines.append(f"{run.system}: not saturated up to {highest.rate:g}/s offered: offer more (--rates)")
    else:
        ratio = highest.completed_rate / peak.completed_rate if peak.completed_rate else math.nan
        lines.append(
            f"{run.system}: saturated from {first.rate:g}/s offered; saturation rate (the most completed per "
            f"second in a step) {peak.completed_rate:.1f}/s; at the highest rate offered ({highest.rate:g}/s) "
            f"{highest.completed_rate:.1f}/s completed = {ratio:.2f} × the saturation rate"
        )
    return lines


def print_report(runs: Sequence[SystemRun], opts: argparse.Namespace, load: str = "n/a") -> None:
    print_table(
        COLUMNS,
        [step_row(st) for run in runs for st in run.steps],
        title=f"The agent path under open-loop load: K={opts.k} workers (claim_next wait_seconds="
        f"{opts.wait_seconds:g} → complete), {opts.step_seconds:g} s measured per step after "
        f"{opts.warmup_seconds:g} s of warm-up; latencies from the create's send (client) and from "
        f"created_at to the attempt's claimed_at (database), ∞ = not claimed by the end (the last step's drain included); load average "
        f"during the run {load}",
    )
    print()
    for run in runs:
        for line in verdicts(run):
            print(line)
        extra = []
        if run.killed:
            extra.append(f"{run.killed} backends terminated")
        if run.scans:
            extra.append(f"{run.scans} reader transactions")
        for note in extra + run.notes:
            print(f"{run.system}: {note}")
    if opts.by_table:
        rows = [
            [
                st.system,
                f"{st.rate:g}",
                st.fault,
                table,
                _per_job(t["made"], st.completed, digits=2),
                _per_job(t["left"], st.completed, digits=2),
                f"{t['dead']:,}",
                f"{t['pages']:,}",
                f"{t['vacuums']:,}",
            ]
            for run in runs
            for st in run.steps
            for table, t in st.by_table.items()
        ]
        print_table(
            [
                "system",
                "offered rate",
                "fault",
                "table",
                "dead/job made",
                "dead/job left",
                "n_dead_tup at end",
                "pages at end",
                "vacuums",
            ],
            rows,
            title="Dead row versions by table (pg_stat_user_tables, read at the edges of each window)",
        )


# --- the command ------------------------------------------------------------------------------


def _rates(text: str) -> list[float]:
    rates = [float(r) for r in text.split(",") if r.strip()]
    if not rates or any(r <= 0 for r in rates):
        raise argparse.ArgumentTypeError("rates are positive numbers, comma-separated")
    return rates


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--rates",
        type=_rates,
        default=[50.0, 100.0, 200.0, 400.0],
        help="offered jobs/s per step (default 50,100,200,400)",
    )
    parser.add_argument("--step-seconds", type=float, default=20.0, help="measured seconds per step (default 20)")
    parser.add_argument(
        "--warmup-seconds", type=float, default=5.0, help="unmeasured seconds before each step (default 5)"
    )
    parser.add_argument("--k", type=int, default=16, help="workers (default 16)")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="Board server processes on one socket, as `manage.py up --processes N` (default 1)",
    )
    parser.add_argument("--wait-seconds", type=float, default=2.0, help="claim_next's wait_seconds (default 2)")
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=10.0,
        help="after the last step, seconds the workers may go on claiming what waits (default 10)",
    )
    parser.add_argument(
        "--max-in-flight", type=int, default=256, help="creates in flight at most; beyond: shed (default 256)"
    )
    parser.add_argument(
        "--held-transaction",
        type=int,
        nargs="?",
        const=0,
        default=None,
        metavar="STEPS",
        help="hold a transaction (with an xid) open through the first STEPS steps (default: half), then commit",
    )
    parser.add_argument("--readers", type=int, default=0, help="REPEATABLE READ sessions scanning the hot tables")
    parser.add_argument("--reader-pause", type=float, default=0.0, help="seconds each reader waits between scans")
    parser.add_argument(
        "--terminate", action="store_true", help="pg_terminate_backend Board's connections twice a second"
    )
    parser.add_argument("--peer", choices=("procrastinate",), help="also run the same load against a peer")
    parser.add_argument("--by-table", action="store_true", help="also: dead row versions table by table")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the harness, not the speed")
    if "--smoke" in (sys.argv[1:] if argv is None else argv):  # tiny defaults; flags given still win
        parser.set_defaults(
            rates=[20.0, 40.0], step_seconds=1.5, warmup_seconds=0.5, k=4, max_in_flight=32, drain_seconds=3.0
        )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_options(argv)
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    runs = []

    def log(line: str) -> None:
        print(line, flush=True)

    with bench_server() as admin, LoadSampler() as load:
        with board_database(admin) as conninfo:
            runs.append(run_board_in(conninfo, opts, log))
        if opts.peer == "procrastinate":
            from bench.systems import procrastinate_available

            missing = procrastinate_available()
            if missing:
                raise SystemExit(missing)
            with fresh_database(admin, "bench_agent_load_peer") as conninfo:
                runs.append(run_peer_in(conninfo, opts, log))
    print_report(runs, opts, load.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())

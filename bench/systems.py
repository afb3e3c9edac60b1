"""The systems under test: how each one is loaded, drained, timed and checked.

Every system follows the same four steps in its own fresh database:

1. ``prepare``: load N jobs through the system's own enqueue path (not timed), then
   ``VACUUM (ANALYZE)`` and ``CHECKPOINT`` so each run starts from the same state;
2. ``drain``: K workers, released together, take and finish jobs until none is left;
3. ``elapsed``: the server clock at the release → the latest completion the system recorded;
4. ``verify``: in SQL, all N done exactly once and the system's own invariants hold.

Workers are module-level functions (``run_gang`` may spawn them as processes) taking
``(index, barrier, *args)`` and calling :func:`start` once connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, LiteralString

from psycopg import sql
from psycopg.rows import dict_row

from bench.common import (
    DictConnection,
    check,
    client_cpu_seconds,
    connect,
    create_todos,
    fresh_database,
    make_agent,
    one_row,
    run_gang,
    server_cpu_seconds,
    setup_django,
    store_database,
)
from tests.support.invariants import broken_counts, broken_lifecycle, broken_slots

QUEUE = "bench"


def start(barrier) -> None:
    """Two waits: the first tells the parent "all connected", the second is the parent's release
    after it has read the server clock."""
    barrier.wait(timeout=120)
    barrier.wait(timeout=120)


@dataclass
class Outcome:
    system: str
    n: int
    seconds: float  # server clock: release → latest recorded completion
    wall_seconds: float  # client clock: release → the last worker's last completion
    per_worker: list[int]
    wal_bytes: int = 0  # WAL written during the drain (the whole server: only this run writes)
    wal_fpi: int = 0  # full-page images among it
    server_cpu: float | None = None  # CPU seconds the server spent during the drain (all backends)
    client_cpu: float | None = None  # CPU seconds the workers' Python spent (this process + children)
    lock_wait_share: float | None = None  # share of worker-backend samples waiting on a heavyweight lock
    lock_waits_by_event: dict | None = None  # those samples by lock type (object = the notify lock)

    @property
    def wal_per_job(self) -> float:
        return self.wal_bytes / self.n if self.n else float("nan")

    @property
    def rate(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("nan")


def _prepare_common(conninfo: str, tables: tuple[str, ...]) -> None:
    with connect(conninfo) as conn:
        for table in tables:
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
        conn.execute("CHECKPOINT")


WAL_NOW = "SELECT pg_current_wal_insert_lsn() AS lsn, (SELECT wal_fpi FROM pg_stat_wal) AS fpi"

# The workers' backends, sampled: how many there are and how many wait on a heavyweight lock (the
# notify lock PostgreSQL takes at the commit of a NOTIFYing transaction is one). The relay, the
# clock and the sampler itself are not workers.
LOCK_SAMPLE = """
SELECT wait_event_type = 'Lock' AS waiting, wait_event, count(*) AS n
FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND application_name NOT IN ('board-relay', 'bench-clock')
GROUP BY 1, 2"""


class LockSampler:
    """Samples the workers' backends every ``interval`` seconds while a drain runs."""

    def __init__(self, conninfo: str, interval: float = 0.01):
        self.conninfo, self.interval = conninfo, interval
        self.samples = self.waiting = 0
        self.by_event: dict[str, int] = {}  # which heavyweight locks were waited on
        self.stop = threading.Event()

    def _run(self) -> None:
        with DictConnection.connect(
            self.conninfo, autocommit=True, row_factory=dict_row, application_name="bench-sampler"
        ) as conn:
            while not self.stop.wait(self.interval):
                for row in conn.execute(LOCK_SAMPLE).fetchall():
                    self.samples += row["n"]
                    if row["waiting"]:
                        self.waiting += row["n"]
                        self.by_event[row["wait_event"]] = self.by_event.get(row["wait_event"], 0) + row["n"]

    @property
    def share(self) -> float | None:
        return self.waiting / self.samples if self.samples else None

    def __enter__(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def _timed_gang(conninfo: str, target, k: int, args: tuple, mode: str, end_sql: LiteralString):
    """Run the gang; return (server seconds, gang, WAL bytes, WAL full-page images).
    ``end_sql`` answers the latest completion."""
    with DictConnection.connect(
        conninfo, autocommit=True, row_factory=dict_row, application_name="bench-clock"
    ) as clock:
        holder: dict[str, Any] = {}

        def on_ready():
            holder.update(one_row(clock.execute(WAL_NOW)))
            holder["cpu0"], holder["ccpu0"] = server_cpu_seconds(clock), client_cpu_seconds()
            holder["t0"] = one_row(clock.execute("SELECT clock_timestamp() AS t"))["t"]

        with LockSampler(conninfo) as sampler:
            gang = run_gang(target, k, args, mode=mode, on_ready=on_ready)
        cpu1, ccpu1 = server_cpu_seconds(clock), client_cpu_seconds()
        worker_cpu = [x["cpu"] for x in gang.extra if "cpu" in x]
        row = one_row(clock.execute(f"SELECT extract(epoch FROM ({end_sql}) - %(t0)s)::float8 AS s", holder))
        # Backends report their WAL statistics when they exit or at most once a second.
        time.sleep(1.1)
        clock.execute("SELECT pg_stat_clear_snapshot()")
        wal = one_row(
            clock.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %(lsn)s)::bigint AS bytes, "
                "(SELECT wal_fpi FROM pg_stat_wal) - %(fpi)s AS fpi",
                holder,
            )
        )
    gang.extra.append(
        {
            "wal_bytes": int(wal["bytes"]),
            "wal_fpi": int(wal["fpi"]),
            "server_cpu": None if cpu1 is None or holder["cpu0"] is None else cpu1 - holder["cpu0"],
            # The workers' own CPU when they measure it (thread time: excludes process start-up and
            # the other threads); else this process's and its reaped children's CPU.
            "client_cpu": sum(worker_cpu) if len(worker_cpu) == len(gang.done) else ccpu1 - holder["ccpu0"],
            "lock_wait_share": sampler.share,
            "lock_waits_by_event": dict(sampler.by_event),
        }
    )
    return float(row["s"] or 0.0), gang


def _wal(gang) -> dict:
    return {
        key: gang.extra[-1][key]
        for key in ("wal_bytes", "wal_fpi", "server_cpu", "client_cpu", "lock_wait_share", "lock_waits_by_event")
    }


# --- Board's store ----------------------------------------------------------------------------


def store_worker(index: int, barrier, conninfo: str, scope, batch: int, variant: str | None = None) -> dict:
    """One agent loop through the store's statements: claim → complete (or the batch pair)."""
    setup_django()
    from bench import variants
    from todos.core.db import execute
    from todos.core.store import agent

    done, last = 0, None
    with connect(conninfo) as conn:
        variants.prepare_session(variant, conn)
        start(barrier)
        cpu0 = time.thread_time()
        while True:
            if batch == 1:
                claim = execute(agent.claim_next(scope, queue=QUEUE), conn)
                if claim is None:
                    break
                execute(agent.complete(scope, claim.todo.id), conn)
                done += 1
            else:
                claims = execute(agent.claim_batch(scope, max=batch, queue=QUEUE), conn)
                if not claims:
                    break
                items = [{"id": c.todo.id} for c in claims]
                out = execute(agent.complete_batch(scope, items=items), conn)
                done += sum(1 for r in out if r.error is None)
            last = time.monotonic()
    return {"done": done, "last": last, "cpu": time.thread_time() - cpu0}


STORE_VERIFY = """
SELECT
  (SELECT count(*) FROM todos) AS total,
  (SELECT count(*) FROM todos WHERE state = 'done') AS done,
  (SELECT count(*) FROM todos WHERE state = 'claimed') AS claimed,
  (SELECT count(*) FROM todo_attempts WHERE ended_at IS NULL) AS open_attempts,
  (SELECT count(*) FROM todos t WHERE t.state = 'done' AND (
       t.attempts_total <> 1
    OR (SELECT count(*) FROM todo_attempts a WHERE a.todo_id = t.id) <> 1
    OR NOT EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq = 1
                   AND a.outcome = 'completed' AND a.disposition = 'done' AND a.ended_at IS NOT NULL)
  )) AS bad_history
"""


@contextlib.contextmanager
def relaying(conninfo: str):
    """The change-log relay, as a Board process runs it, beside the workers: its cost is in the
    figure (server CPU, WAL) as it is in production."""
    setup_django()
    from todos.live.relay import Relay

    relay = Relay(name="bench", conninfo=conninfo).start()
    try:
        yield relay
    finally:
        relay.stop()


def wait_relayed(conninfo: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    with connect(conninfo) as conn:
        while one_row(conn.execute("SELECT EXISTS (SELECT 1 FROM change_log) AS w"))["w"]:
            check(time.monotonic() < deadline, "store: the relay did not drain the change log")
            time.sleep(0.01)


def verify_store(conninfo: str, n: int) -> None:
    with connect(conninfo) as conn:
        r = one_row(conn.execute(STORE_VERIFY))
        broken = broken_lifecycle(conn)
        if one_row(conn.execute("SELECT to_regclass('change_log') IS NOT NULL AS has"))["has"]:
            broken += broken_counts(conn)
        if one_row(conn.execute("SELECT to_regclass('concurrency_keys') IS NOT NULL AS has"))["has"]:
            broken += broken_slots(conn)
    check(r["total"] == n, f"store: {r['total']} todos, expected {n}")
    check(r["done"] == n, f"store: {r['done']} done of {n}")
    check(
        r["claimed"] == 0 and r["open_attempts"] == 0,
        f"store: {r['claimed']} claimed, {r['open_attempts']} open attempts",
    )
    check(r["bad_history"] == 0, f"store: {r['bad_history']} done todos without exactly one attempt closed completed")
    check(not broken, f"store: lifecycle invariant broken for {broken[:5]}")


def verify_store_crash(conninfo: str, n: int) -> None:
    """As :func:`verify_store`, but a todo may have earlier attempts (a crashed worker's)."""
    with connect(conninfo) as conn:
        r = one_row(conn.execute(STORE_VERIFY))
        broken = broken_lifecycle(conn)
    check(r["total"] == n and r["done"] == n, f"store: {r['done']} done of {r['total']} (expected {n})")
    check(
        r["claimed"] == 0 and r["open_attempts"] == 0,
        f"store: {r['claimed']} claimed, {r['open_attempts']} open attempts",
    )
    check(not broken, f"store: lifecycle invariant broken for {broken[:5]}")


def load_store(conninfo: str, n: int, variant: str | None = None):
    """A team, an endpoint scoped to the bench queue, and ``n`` todos; returns the agent scope."""
    from bench import variants

    v = variants.get(variant)
    with connect(conninfo) as conn:
        for statement in v.schema if v else ():
            conn.execute(statement)
        scope = make_agent(conn, QUEUE)
        create_todos(conn, scope, n, queue=QUEUE)
    _prepare_common(conninfo, ("todos", "todo_attempts"))
    return scope


def drain_store_in(
    conninfo: str, n: int, k: int, *, mode: str, batch: int = 1, variant: str | None = None, label: str | None = None
) -> Outcome:
    """Load, drain and verify the store in an existing database (the smoke test's)."""
    from bench import variants

    scope = load_store(conninfo, n, variant)
    v = variants.get(variant)
    relayed = v is None or v.relay
    with relaying(conninfo) if relayed else contextlib.nullcontext():
        seconds, gang = _timed_gang(
            conninfo, store_worker, k, (conninfo, scope, batch, variant), mode, "SELECT max(completed_at) FROM todos"
        )
        if relayed:
            wait_relayed(conninfo)
    verify_store(conninfo, n)
    return Outcome(label or "store", n, seconds, gang.wall_seconds, gang.done, **_wal(gang))


def run_store(
    admin: str, n: int, k: int, *, mode: str, batch: int = 1, variant: str | None = None, label: str | None = None
) -> Outcome:
    with store_database(admin) as conninfo:
        return drain_store_in(conninfo, n, k, mode=mode, batch=batch, variant=variant, label=label)


# --- the bare SKIP LOCKED loop ----------------------------------------------------------------

BARE_SCHEMA = """
CREATE TABLE bare_jobs (
    id       bigserial   PRIMARY KEY,
    state    text        NOT NULL DEFAULT 'pending',
    payload  jsonb,
    claimed_at timestamptz,
    done_at  timestamptz
);
CREATE INDEX bare_jobs_pending ON bare_jobs (id) WHERE state = 'pending';
"""
BARE_CLAIM = """
UPDATE bare_jobs SET state = 'claimed', claimed_at = now()
WHERE id = (SELECT id FROM bare_jobs WHERE state = 'pending' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id, payload"""
BARE_COMPLETE = "UPDATE bare_jobs SET state = 'done', done_at = now() WHERE id = %(id)s AND state = 'claimed'"


# The same loop with one NOTIFY per statement, as the store sends: isolates what NOTIFY costs.
BARE_CLAIM_NOTIFY = BARE_CLAIM + ", pg_notify('bench_events', id::text)"
BARE_COMPLETE_NOTIFY = BARE_COMPLETE + " RETURNING pg_notify('bench_events', id::text)"


def bare_worker(index: int, barrier, conninfo: str, notify: bool = False) -> dict:
    """The floor: two statements per job, no scope, no history, no notification."""
    claim_sql, complete_sql = (BARE_CLAIM_NOTIFY, BARE_COMPLETE_NOTIFY) if notify else (BARE_CLAIM, BARE_COMPLETE)
    done, last = 0, None
    with connect(conninfo) as conn:
        start(barrier)
        cpu0 = time.thread_time()
        while True:
            row = conn.execute(claim_sql).fetchone()
            if row is None:
                break
            conn.execute(complete_sql, {"id": row["id"]})
            done += 1
            last = time.monotonic()
    return {"done": done, "last": last, "cpu": time.thread_time() - cpu0}


def drain_bare_in(conninfo: str, n: int, k: int, *, mode: str, notify: bool = False) -> Outcome:
    with connect(conninfo) as conn:
        conn.execute(BARE_SCHEMA)
        conn.execute(
            "INSERT INTO bare_jobs (payload) SELECT jsonb_build_object('n', i) FROM generate_series(1, %s) i", (n,)
        )
    _prepare_common(conninfo, ("bare_jobs",))
    seconds, gang = _timed_gang(
        conninfo, bare_worker, k, (conninfo, notify), mode, "SELECT max(done_at) FROM bare_jobs"
    )
    with connect(conninfo) as conn:
        r = one_row(
            conn.execute("SELECT count(*) AS total, count(*) FILTER (WHERE state = 'done') AS done FROM bare_jobs")
        )
    check(r["total"] == n and r["done"] == n, f"bare: {r['done']} done of {r['total']} (expected {n})")
    check(gang.total == n, f"bare: workers completed {gang.total}, expected {n}")
    return Outcome("bare+notify" if notify else "bare", n, seconds, gang.wall_seconds, gang.done, **_wal(gang))


def run_bare(admin: str, n: int, k: int, *, mode: str, notify: bool = False) -> Outcome:
    with fresh_database(admin, "bench_bare") as conninfo:
        return drain_bare_in(conninfo, n, k, mode=mode, notify=notify)


# --- pgqueuer ---------------------------------------------------------------------------------


def pgqueuer_available() -> str | None:
    """None if pgqueuer can run here, else why not (the bench group is not synced)."""
    try:
        import pgqueuer  # noqa: F401
    except ImportError as exc:
        return f"pgqueuer is not installed ({exc}); run `uv sync --group dev --group bench`"
    return None


async def _pgq_load(conninfo: str, n: int) -> None:
    import psycopg
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.queries import Queries

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        queries = Queries(PsycopgDriver(conn))
        await queries.install()
        chunk = 5000
        for s in range(0, n, chunk):
            m = min(n, s + chunk) - s
            await queries.enqueue(["noop"] * m, [b"{}"] * m, [0] * m)


def pgqueuer_worker(index: int, barrier, conninfo: str, batch_size: int, managers: int) -> dict:
    """``managers`` QueueManagers in this process, each on its own psycopg connection, run in
    drain mode with a no-op entrypoint."""
    import psycopg
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.qm import QueueManager
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode

    async def main() -> dict:
        done = 0
        conns = [await psycopg.AsyncConnection.connect(conninfo, autocommit=True) for _ in range(managers)]
        qms = []
        for conn in conns:
            qm = QueueManager(Queries(PsycopgDriver(conn)))

            @qm.entrypoint("noop")
            async def noop(job) -> None:
                nonlocal done
                done += 1

            qms.append(qm)
        await asyncio.to_thread(start, barrier)
        await asyncio.gather(
            *(
                qm.run(
                    batch_size=batch_size,
                    mode=QueueExecutionMode.drain,
                    dequeue_timeout=timedelta(seconds=1),
                    log_aggregation_interval=timedelta(0),
                )
                for qm in qms
            )
        )
        last = time.monotonic()
        for conn in conns:
            await conn.close()
        return {"done": done, "last": last}

    return asyncio.run(main())


def drain_pgqueuer_in(
    conninfo: str, n: int, k: int, *, batch_size: int, layout: str = "processes", mode: str = "processes"
) -> Outcome:
    """``layout``: ``processes`` = k workers with one QueueManager each; ``asyncio`` = one worker
    running k QueueManagers on one event loop. ``mode``: the workers are processes (the figures)
    or threads (the smoke test: no interpreter start-up)."""
    asyncio.run(_pgq_load(conninfo, n))
    _prepare_common(conninfo, ("pgqueuer", "pgqueuer_log"))
    procs, per = (k, 1) if layout == "processes" else (1, k)
    seconds, gang = _timed_gang(
        conninfo,
        pgqueuer_worker,
        procs,
        (conninfo, batch_size, per),
        mode,
        "SELECT max(created) FROM pgqueuer_log WHERE status = 'successful'",
    )
    with connect(conninfo) as conn:
        r = one_row(
            conn.execute("""SELECT (SELECT count(*) FROM pgqueuer) AS left_in_queue,
                                   (SELECT count(*) FROM pgqueuer_log WHERE status = 'successful') AS ok,
                                   (SELECT count(DISTINCT job_id) FROM pgqueuer_log WHERE status = 'successful') AS ok_distinct,
                                   (SELECT count(*) FROM pgqueuer_log WHERE status NOT IN ('successful', 'queued', 'picked')) AS other""")
        )
    check(r["left_in_queue"] == 0, f"pgqueuer: {r['left_in_queue']} jobs left in the queue")
    check(
        r["ok"] == n and r["ok_distinct"] == n,
        f"pgqueuer: {r['ok']} successful log rows ({r['ok_distinct']} distinct), expected {n}",
    )
    check(r["other"] == 0, f"pgqueuer: {r['other']} log rows with a failure status")
    return Outcome(f"pgqueuer batch={batch_size}", n, seconds, gang.wall_seconds, gang.done, **_wal(gang))


def run_pgqueuer(admin: str, n: int, k: int, *, batch_size: int, layout: str = "processes") -> Outcome:
    with fresh_database(admin, "bench_pgqueuer") as conninfo:
        return drain_pgqueuer_in(conninfo, n, k, batch_size=batch_size, layout=layout)


# --- procrastinate ----------------------------------------------------------------------------


def procrastinate_available() -> str | None:
    try:
        import procrastinate  # noqa: F401
    except ImportError as exc:
        return f"procrastinate is not installed ({exc}); run `uv sync --group dev --group bench`"
    return None


def _procrastinate_app(conninfo: str, pool_size: int):
    import procrastinate

    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=conninfo, min_size=pool_size, max_size=pool_size)
    )
    return app


async def _procrastinate_load(conninfo: str, n: int) -> None:
    from procrastinate.types import JSONDict

    app = _procrastinate_app(conninfo, 2)

    @app.task(name="noop", queue=QUEUE)
    async def noop(n: int) -> None:
        return None

    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        chunk = 2000
        for s in range(0, n, chunk):
            kwargs: list[JSONDict] = [{"n": i} for i in range(s, min(n, s + chunk))]
            await noop.batch_defer_async(*kwargs)


def procrastinate_worker(index: int, barrier, conninfo: str, concurrency: int) -> dict:
    """One procrastinate worker with ``concurrency`` slots and a no-op async task; ``wait=False``
    makes it exit when the queue is empty. The pool has a connection per slot and two spare."""

    async def main() -> dict:
        done = 0
        app = _procrastinate_app(conninfo, concurrency + 2)

        @app.task(name="noop", queue=QUEUE)
        async def noop(n: int) -> None:
            nonlocal done
            done += 1

        async with app.open_async():
            await asyncio.to_thread(start, barrier)
            await app.run_worker_async(
                queues=[QUEUE], concurrency=concurrency, wait=False, install_signal_handlers=False
            )
            last = time.monotonic()
        return {"done": done, "last": last}

    return asyncio.run(main())


def drain_procrastinate_in(conninfo: str, n: int, k: int, *, mode: str = "processes") -> Outcome:
    asyncio.run(_procrastinate_load(conninfo, n))
    _prepare_common(conninfo, ("procrastinate_jobs", "procrastinate_events"))
    seconds, gang = _timed_gang(
        conninfo,
        procrastinate_worker,
        1,
        (conninfo, k),
        mode,
        "SELECT max(at) FROM procrastinate_events WHERE type = 'succeeded'",
    )
    with connect(conninfo) as conn:
        r = one_row(
            conn.execute("""SELECT (SELECT count(*) FROM procrastinate_jobs) AS total,
                                   (SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded') AS ok,
                                   (SELECT count(*) FROM procrastinate_events WHERE type = 'started') AS started,
                                   (SELECT count(DISTINCT job_id) FROM procrastinate_events WHERE type = 'started') AS started_distinct""")
        )
    check(r["total"] == n and r["ok"] == n, f"procrastinate: {r['ok']} succeeded of {r['total']} (expected {n})")
    check(
        r["started"] == n and r["started_distinct"] == n,
        f"procrastinate: {r['started']} starts for {r['started_distinct']} jobs, expected {n} once each",
    )
    return Outcome(f"procrastinate conc={k}", n, seconds, gang.wall_seconds, gang.done, **_wal(gang))


def run_procrastinate(admin: str, n: int, k: int) -> Outcome:
    with fresh_database(admin, "bench_procrastinate") as conninfo:
        return drain_procrastinate_in(conninfo, n, k)

"""What every benchmark shares: one PostgreSQL server, a fresh database per system, worker gangs.

Why fresh databases on one server: each system under test gets the same PostgreSQL (same binary,
same settings, same disk and fsync), but none of them sees another's tables, bloat or statistics,
and a run leaves nothing behind. The server is the embedded one (started in a temporary directory
and deleted at exit) unless ``DATABASE_URL`` names another; the database it names is only used to
issue ``CREATE DATABASE``.

Why time in the database: every system records, in the statement that completes a job, the
transaction time of that completion (``completed_at``, ``done_at``, the log row's ``created``,
the event's ``at``). "Time to the N-th committed completion" is then the latest of those minus
the server clock read just before the workers are released: the same definition for every system,
independent of how (or how late) each client library notices it is done.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import queue as queue_module
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row, tuple_row

Row = TypeVar("Row")
DictConnection = psycopg.Connection[DictRow]

_django_ready = False


def setup_django() -> None:
    """Configure Django once per process (the store's statements read a few settings)."""
    global _django_ready
    if _django_ready:
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
    import django

    django.setup()
    _django_ready = True


# --- server and databases ---------------------------------------------------------------------


@contextlib.contextmanager
def bench_server() -> Iterator[str]:
    """Yield an admin conninfo for the server the benchmarks use.

    With ``DATABASE_URL`` set, that server (its database is used only for CREATE/DROP DATABASE).
    Otherwise a throwaway embedded PostgreSQL in a temporary directory, deleted at exit.
    """
    setup_django()
    from django.conf import settings

    if settings.DATABASE_URL:
        from todos.core import db

        yield db.conninfo()
        return
    import atexit

    root = Path(tempfile.mkdtemp(prefix="board-bench-"))
    # Registered before the server starts, so it runs after the server's own exit handler (which
    # stops PostgreSQL and deletes the data directory): atexit runs handlers last-in, first-out.
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    settings.BOARD_DATA_DIR = root / "pg"
    settings.BOARD_DATA_DIR_EPHEMERAL = True
    from board.db.embedded import ensure_server

    server = ensure_server(settings.BOARD_DATA_DIR, dbname="postgres", ephemeral=True)
    yield server.conninfo("postgres")


def with_dbname(conninfo: str, dbname: str) -> str:
    return make_conninfo(conninfo, dbname=dbname)


@contextlib.contextmanager
def fresh_database(admin: str, prefix: str) -> Iterator[str]:
    """CREATE a uniquely named database on ``admin``'s server; DROP it (forcing) afterwards."""
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_dbname(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.contextmanager
def store_database(admin: str) -> Iterator[str]:
    """A fresh database with Board's schema: Django's ``migrate`` (the SQL files, in order) run
    after pointing the default connection at it. The store's pools follow the settings."""
    setup_django()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    from todos.core import db

    config = settings.DATABASES["default"]
    saved = dict(config)
    with fresh_database(admin, "bench_store") as conninfo:
        params = conninfo_to_dict(conninfo)
        connections.close_all()
        config["NAME"] = params["dbname"]
        if config["ENGINE"] != "board.db.backend":
            config.update(HOST=params.get("host", ""), PORT=str(params.get("port", "")))
        db.reset_pools()
        try:
            call_command("migrate", verbosity=0, interactive=False)
            connections.close_all()
            yield conninfo
        finally:
            connections.close_all()
            db.reset_pools()
            config.clear()
            config.update(saved)


def connect(conninfo: str) -> DictConnection:
    """The connection every worker uses: autocommit (one statement, one transaction), dict rows."""
    return DictConnection.connect(conninfo, autocommit=True, row_factory=dict_row)


def one_row(cursor: psycopg.Cursor[Row]) -> Row:
    """The row of a query that always returns one (an aggregate, a clock read, ``EXISTS``)."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("the query returned no row")
    return row


def make_agent(conn: DictConnection, queue: str = "bench", *, lease: int | None = None):
    """A team and an endpoint scoped to ``queue``, as ``tests/factories.py`` builds them."""
    setup_django()
    from todos.core.db import execute
    from todos.core.store import endpoints, teams
    from todos.core.store.endpoints import SCOPE_VERBS
    from todos.core.store.scopes import AgentScope

    slug = f"bench-{uuid.uuid4().hex[:10]}"
    team = execute(teams.create_team(slug=slug, name=slug), conn)
    vended = execute(
        endpoints.vend(
            None,
            team_id=team.id,
            name=slug,
            slug=slug,
            verbs=list(SCOPE_VERBS),
            queues=[queue],
            default_lease_ttl_seconds=lease,
        ),
        conn,
    )
    ep = vended.endpoint
    return AgentScope(
        endpoint_id=uuid.UUID(str(ep.id)),
        team_id=ep.team_id,
        queues=tuple(ep.scope_queues),
        default_lease_ttl_seconds=ep.default_lease_ttl_seconds,
        verbs=frozenset(ep.scope_verbs),
    )


def create_todos(conn: DictConnection, scope, n: int, *, queue: str = "bench", chunk: int = 5000) -> None:
    """Enqueue ``n`` todos through the store's own ``create`` statement (pipelined, not timed)."""
    from todos.core.store import agent

    stmt = agent.create(scope, queue=queue, title="bench", payload={"n": 0})
    for start in range(0, n, chunk):
        params = [
            agent.create(scope, queue=queue, title=f"bench {i}", payload={"n": i}).params
            for i in range(start, min(n, start + chunk))
        ]
        with conn.cursor() as cur:
            cur.executemany(stmt.sql, params)


def server_now(conninfo: str) -> Any:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return one_row(conn.execute("SELECT clock_timestamp()"))[0]


def vacuum_analyze(conninfo: str, *tables: str) -> None:
    """Start every system from the same state: freshly loaded tables, vacuumed and analysed."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table in tables:
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(*table.split("."))))


# --- worker gangs -----------------------------------------------------------------------------


@dataclass
class GangResult:
    """What a gang of workers did: per-worker counts and the client-side clock."""

    done: list[int]
    wall_seconds: float  # release of the workers → the last worker's last completion (client clock)
    extra: list[dict] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.done)


def _worker_shell(target: Callable, index: int, args: tuple, barrier, results) -> None:
    try:
        out = target(index, barrier, *args)
        results.put((index, out, None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        import traceback

        barrier.abort()
        results.put((index, None, traceback.format_exc()))
        if not isinstance(exc, Exception):
            raise


def run_gang(
    target: Callable,
    k: int,
    args: tuple,
    *,
    mode: str = "threads",
    timeout: float = 3600,
    on_ready: Callable[[], Any] | None = None,
) -> GangResult:
    """Run ``target(index, barrier, *args)`` in ``k`` threads or spawned processes.

    Each worker connects, then waits on ``barrier`` twice (k + 1 parties, the parent included):
    the first wait means "everyone is connected", then the parent calls ``on_ready`` (it reads
    the server clock) and the second wait releases the workers. So neither process start-up nor
    connection set-up is timed. A worker returns a dict with ``done`` (jobs it completed) and
    ``last`` (``time.monotonic()`` at its last completion; system-wide on Linux, so comparable
    across processes).
    """
    if mode == "threads":
        barrier = threading.Barrier(k + 1)
        results: Any = queue_module.Queue()
        workers = [
            threading.Thread(target=_worker_shell, args=(target, i, args, barrier, results), daemon=True)
            for i in range(k)
        ]
    elif mode == "processes":
        ctx = multiprocessing.get_context("spawn")
        barrier = ctx.Barrier(k + 1)
        results = ctx.Queue()
        workers = [
            ctx.Process(target=_worker_shell, args=(target, i, args, barrier, results), daemon=True) for i in range(k)
        ]
    else:
        raise ValueError(f"mode must be 'threads' or 'processes', not {mode!r}")
    for w in workers:
        w.start()
    try:
        barrier.wait(timeout=120)
        if on_ready is not None:
            on_ready()
        barrier.wait(timeout=120)
    except threading.BrokenBarrierError:
        pass  # a worker failed before the start; its traceback is in the results
    t0 = time.monotonic()
    outs: dict[int, dict] = {}
    deadline = time.monotonic() + timeout
    errors: dict[int, str] = {}
    while len(outs) + len(errors) < k:
        index, out, error = results.get(timeout=max(1.0, deadline - time.monotonic()))
        if error:
            errors[index] = error
        else:
            outs[index] = out
    if errors:
        # A worker that failed aborts the barrier, so the others report BrokenBarrierError:
        # show the failure that caused it.
        index, error = min(errors.items(), key=lambda item: "BrokenBarrierError" in item[1])
        raise RuntimeError(f"worker {index} failed:\n{error}")
    for w in workers:
        w.join(timeout=30)
    lasts = [o["last"] for o in outs.values() if o.get("last") is not None]
    wall = (max(lasts) - t0) if lasts else 0.0
    return GangResult(done=[outs[i]["done"] for i in range(k)], wall_seconds=wall, extra=[outs[i] for i in range(k)])


# --- CPU accounting ---------------------------------------------------------------------------


def server_cpu_seconds(conn: psycopg.Connection[Any]) -> float | None:
    """CPU seconds the PostgreSQL server has used so far (postmaster, its live children and its
    exited children), when the server runs on this machine; None otherwise.

    Exited backends' time is in the postmaster's ``cutime``/``cstime`` once they are reaped, so a
    difference taken around a run counts the workers' backends even after they disconnect.
    """
    try:
        import psutil

        with conn.cursor(row_factory=tuple_row) as cur:
            pid = one_row(cur.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"))[0]
        postmaster = psutil.Process(pid).parent()
        if postmaster is None:
            return None
        times = postmaster.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        for child in postmaster.children():
            try:
                t = child.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
        return total
    except Exception:  # noqa: BLE001 - a remote server, or no permission: the figure is optional
        return None


def client_cpu_seconds() -> float:
    """CPU seconds of this process and its reaped children (spawned workers)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# --- reporting --------------------------------------------------------------------------------


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """A plain fixed-width table (the figures are meant to be pasted into bench/README.md)."""
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    if title:
        print(f"\n{title}")
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def base_parser(description: str, default_n: int) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n", type=int, default=default_n, help=f"todos per run (default {default_n:,})")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the harness, not the speed")
    return parser


class VerificationError(AssertionError):
    """A run's end state broke the method: a job lost, duplicated or left half done."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise VerificationError(message)

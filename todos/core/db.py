"""Connections for the store and the selectors: psycopg pools and a two-line statement executor.

The store does not go through Django's ORM connection: its statements are raw SQL on autocommit
psycopg connections (one statement, one transaction), shared through a pool per process. The async
API runs them on an :class:`~psycopg_pool.AsyncConnectionPool` in the server's event loop, so a
request that waits (a long poll) holds no connection and no thread.

Pools are built lazily from ``settings.DATABASES['default']`` so the test run, which renames the
database, gets pools on the test database (:func:`reset_pools`).

While the database is unreachable the pools refuse requests at once instead of letting each wait
``BOARD_DB_POOL_TIMEOUT``: their connection attempts feed the process's circuit
(:mod:`todos.core.circuit`), which they ask before handing out a connection.

Behind a transaction-mode pooler (PgBouncer), ``DATABASE_URL`` names the pooler and each
transaction may run on another server connection. The pools hold nothing across statements (each
is one transaction, or an explicit ``conn.transaction()`` block) and, unless
``BOARD_DB_PREPARED_STATEMENTS`` says otherwise, prepare nothing (``prepare_threshold=None``).
What needs a session of its own — ``LISTEN``, the relay's and the migrations' session advisory
locks, :func:`connect`'s dedicated connections — goes to :func:`session_conninfo`
(``BOARD_LISTEN_URL``, the database itself).
"""

from __future__ import annotations

import asyncio
import logging
import select
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, LiteralString, Self, TypeVar

import psycopg
import psycopg._queries
import psycopg.conninfo
import psycopg.sql
from django.conf import settings
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from psycopg_pool.base import AttemptWithBackoff
from psycopg_pool.pool import AddConnection
from psycopg_pool.pool_async import AddConnection as AsyncAddConnection
from psycopg_pool.pool_async import MaintenanceTask as AsyncMaintenanceTask
from psycopg_pool.pool_async import StopWorker as AsyncStopWorker

from todos.core import admission, telemetry
from todos.core.circuit import CIRCUIT
from todos.core.errors import Conflict, Internal, Invalid, StaleSnapshot
from todos.core.unavailable import classify as classify_unavailable

logger = logging.getLogger(__name__)


# psycopg caches the conversion of a query's ``%(name)s`` placeholders only for texts of up to 4 KB
# (``MAX_CACHED_STATEMENT_LENGTH``), a guard against ORMs' one-off statements. The store's statements
# are a small, fixed set, and the claim is 5.5 KB: converting it again on every call cost a fifth of
# a worker's client CPU per job (bench/README.md). psycopg is pinned; a test checks the
# constant is still there.
QUERY_CACHE_MAX_BYTES = 16 * 1024
psycopg._queries.MAX_CACHED_STATEMENT_LENGTH = max(psycopg._queries.MAX_CACHED_STATEMENT_LENGTH, QUERY_CACHE_MAX_BYTES)

T = TypeVar("T")

# Every connection here returns rows as dicts (``row_factory=dict_row``); the aliases tell the
# type checker so.
DictConnection = psycopg.Connection[DictRow]
AsyncDictConnection = psycopg.AsyncConnection[DictRow]


@dataclass(frozen=True)
class Statement(Generic[T]):
    """One SQL statement, its parameters, and how to turn its rows into the caller's result.

    ``finish`` is where a zero-row outcome is classified (not found, forbidden, conflict).
    ``name`` is its catalog name, read from the function that built it while tracing is on
    (its span carries it: docs/telemetry.md), else empty.
    """

    sql: LiteralString | psycopg.sql.SQL | psycopg.sql.Composed
    params: Mapping[str, Any]
    finish: Callable[[list[dict]], T]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if telemetry.STATE.tracer is not None and not self.name:
            # frames up: this method, the dataclass's __init__, then whoever built the statement
            object.__setattr__(self, "name", telemetry.statement_name(2))


def single_row(cursor: psycopg.Cursor[DictRow]) -> DictRow:
    """The row of a statement that always returns exactly one (an aggregate, a function call, the
    one-row ``relay_state``): ``fetchone()`` says "or None", and here None would be a bug."""
    row = cursor.fetchone()
    if row is None:
        raise Internal("a statement that always returns one row returned none")
    return row


def conninfo() -> str:
    config = settings.DATABASES["default"]
    if config["ENGINE"] == "board.db.backend":
        from board.db.embedded import ensure_server

        server = ensure_server(
            settings.BOARD_DATA_DIR, dbname=config["NAME"], ephemeral=settings.BOARD_DATA_DIR_EPHEMERAL
        )
        return server.conninfo(config["NAME"])
    params = {
        "dbname": config["NAME"],
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        **{k: v for k, v in (config.get("OPTIONS") or {}).items() if isinstance(v, (str, int))},
    }
    return psycopg.conninfo.make_conninfo(**{k: v for k, v in params.items() if v is not None})


def session_conninfo() -> str:
    """Where a connection that keeps session state goes: ``BOARD_LISTEN_URL`` (the database
    itself, past a transaction-mode pooler), else the store's database (:func:`conninfo`)."""
    return settings.BOARD_LISTEN_URL or conninfo()


def connect(**kwargs: Any) -> DictConnection:
    """A dedicated connection with a session of its own (listeners, the relay, session advisory
    locks, benchmarks, tests): on :func:`session_conninfo`, never through a transaction pooler."""
    kwargs.setdefault("autocommit", True)
    return DictConnection.connect(session_conninfo(), row_factory=dict_row, **kwargs)


async def aconnect(**kwargs: Any) -> AsyncDictConnection:
    kwargs.setdefault("autocommit", True)
    return await AsyncDictConnection.connect(session_conninfo(), row_factory=dict_row, **kwargs)


# How long the pools keep retrying to replace a lost connection before giving up on it. Their
# retries back off exponentially, so the default (5 minutes) would let a pool come back up to
# minutes after the database did; after giving up, the next request that needs a connection
# starts a fresh attempt at once, so recovery follows the database within seconds.
RECONNECT_TIMEOUT_SECONDS = 10.0


# How long a pooled connection attempt waits for the server before it counts as failed (libpq's
# least; ``?connect_timeout=`` in DATABASE_URL sets another). Without one, a host that drops
# packets would hold each attempt for minutes, and the circuit (todos/core/circuit.py) would not
# open before the requests waiting on them had each waited BOARD_DB_POOL_TIMEOUT.
CONNECT_TIMEOUT_SECONDS = 2


def pool_conninfo() -> str:
    """:func:`conninfo` with ``BOARD_DB_STATEMENT_TIMEOUT`` added to the connection's options, and
    :data:`CONNECT_TIMEOUT_SECONDS` unless it names a connect timeout of its own."""
    info = conninfo()
    parsed = psycopg.conninfo.conninfo_to_dict(info)
    if "connect_timeout" not in parsed:
        info = psycopg.conninfo.make_conninfo(info, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    timeout_ms = int(settings.BOARD_DB_STATEMENT_TIMEOUT * 1000)
    if timeout_ms <= 0:
        return info
    existing = parsed.get("options") or ""
    return psycopg.conninfo.make_conninfo(info, options=f"{existing} -c statement_timeout={timeout_ms}".strip())


def _pool_settings() -> dict:
    return {
        "min_size": settings.BOARD_DB_POOL_MIN,
        "max_size": max(settings.BOARD_DB_POOL_MAX, settings.BOARD_DB_POOL_MIN),
        "timeout": settings.BOARD_DB_POOL_TIMEOUT,
        "reconnect_timeout": RECONNECT_TIMEOUT_SECONDS,
        "kwargs": {"autocommit": True, "row_factory": dict_row, "prepare_threshold": prepare_threshold()},
    }


# psycopg's own default: a statement is prepared on a connection after its fifth run there.
PREPARE_THRESHOLD = 5


def prepare_threshold() -> int | None:
    """The pools' ``prepare_threshold``: None (never prepare) with ``BOARD_DB_PREPARED_STATEMENTS``
    off, as a transaction pooler without prepared-statement tracking needs."""
    return PREPARE_THRESHOLD if settings.BOARD_DB_PREPARED_STATEMENTS else None


# --- the pools and the circuit (todos/core/circuit.py) ---------------------------------------------
#
# The pools' connections report each connection attempt to the circuit, and the pools ask it
# before they hand out a connection or queue a request for one. The hooks sit where psycopg_pool
# decides under its lock whether a request gets a connection or waits (``_get_ready_connection``),
# where it keeps the waiting requests (``_waiting``) and where it replaces a lost connection
# (``_add_connection``): a request is either refused there or queued before the circuit opens,
# and then refused by ``fail_waiting``; a replacement is put off until the circuit closes, then
# made at once, instead of after the pool's backoff (1, 2, 4 s…). psycopg-pool is pinned;
# tests/test_unavailable_circuit.py checks each of these behaviours.


def _probe(conninfo: str, kwargs: dict[str, Any]) -> None:
    """One connection attempt like the pool's, closed at once (the circuit's probe)."""
    psycopg.Connection.connect(conninfo, **kwargs).close()


class StoreConnection(DictConnection):
    """A pooled connection whose connection attempts tell the circuit how they went."""

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> Self:
        started = time.monotonic()
        try:
            conn = super().connect(conninfo, **kwargs)
        except psycopg.OperationalError as exc:
            CIRCUIT.connect_failed(exc, started, partial(_probe, conninfo, kwargs))
            raise
        CIRCUIT.connected(started)
        return conn


class AsyncStoreConnection(AsyncDictConnection):
    @classmethod
    async def connect(cls, conninfo: str = "", **kwargs: Any) -> Self:
        started = time.monotonic()
        try:
            conn = await super().connect(conninfo, **kwargs)
        except psycopg.OperationalError as exc:
            CIRCUIT.connect_failed(exc, started, partial(_probe, conninfo, kwargs))
            raise
        CIRCUIT.connected(started)
        return conn


class StorePool(ConnectionPool[DictConnection]):
    """The sync pool, refusing requests while the circuit is open."""

    def _get_ready_connection(self, timeout: float | None) -> DictConnection | None:
        CIRCUIT.check()
        return super()._get_ready_connection(timeout)

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        if not CIRCUIT.defer(partial(self.run_task, AddConnection(self, attempt, growing=growing))):
            super()._add_connection(attempt, growing)

    def fail_waiting(self) -> None:
        with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
        for client in waiting:
            client.fail(CIRCUIT.refusal())


class AsyncStorePool(AsyncConnectionPool[AsyncDictConnection]):
    """An event loop's pool, refusing requests while the circuit is open, behind its admission
    gate (todos.core.admission), as wide as the pool."""

    def __init__(self, *args: Any, loop: asyncio.AbstractEventLoop, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.loop = loop
        self.gate = admission.Gate(self.max_size)

    async def _get_ready_connection(self, timeout: float | None) -> AsyncDictConnection | None:
        CIRCUIT.check()
        return await super()._get_ready_connection(timeout)

    @classmethod
    async def worker(cls, q: asyncio.Queue[AsyncMaintenanceTask]) -> None:
        """psycopg_pool's maintenance worker, ended by its own cancellation.

        psycopg_pool's worker counts a ``CancelledError`` out of its task (a connection attempt) as
        that task's failure and waits for the next one. When the event loop shuts down
        (``asyncio.run`` cancelling every task left), the cancellation was the worker's own, and
        swallowing it kept the loop from ever ending (tests/test_loop_shutdown.py).
        """
        me = asyncio.current_task()
        while True:
            task = await q.get()
            if isinstance(task, AsyncStopWorker):
                return
            try:
                await task.run()
            except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001 - as psycopg_pool's worker
                logger.warning("pool task %s failed: %s: %s", task, type(exc).__name__, exc)
            if me is not None and me.cancelling():
                raise asyncio.CancelledError  # the task above ate it

    async def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        task = AsyncAddConnection(self, attempt, growing=growing)
        if not CIRCUIT.defer(partial(self._run_soon, task)):
            await super()._add_connection(attempt, growing)

    def _run_soon(self, task: AsyncAddConnection) -> None:
        """Called from the thread that closes the circuit: the task is queued in the pool's loop."""
        try:
            self.loop.call_soon_threadsafe(self.run_task, task)
        except RuntimeError:
            pass  # the loop is closed, and its pool with it

    def fail_waiting(self) -> None:
        """Called from any thread: the refusals are sent in the pool's own loop."""
        if self.loop.is_closed():
            return  # nobody waits there any more
        try:
            asyncio.run_coroutine_threadsafe(self._fail_waiting(), self.loop)
        except RuntimeError:
            pass  # closed just now

    async def _fail_waiting(self) -> None:
        async with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
        for client in waiting:
            await client.fail(CIRCUIT.refusal())


_lock = threading.Lock()
_pool: StorePool | None = None
_apools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncStorePool] = weakref.WeakKeyDictionary()


def pool() -> ConnectionPool[DictConnection]:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = StorePool(
                    pool_conninfo(),
                    connection_class=StoreConnection,
                    **_pool_settings(),
                    name="board-store",
                    open=False,
                )
                CIRCUIT.watch(_pool)
                _pool.open()
    return _pool


async def apool() -> AsyncStorePool:
    loop = asyncio.get_running_loop()
    existing = _apools.get(loop)
    if existing is None:
        existing = AsyncStorePool(
            pool_conninfo(),
            connection_class=AsyncStoreConnection,
            **_pool_settings(),
            name="board-store-async",
            open=False,
            loop=loop,
        )
        _apools[loop] = existing
        CIRCUIT.watch(existing)
        await existing.open()
    return existing


def _hung_up(conn: DictConnection | AsyncDictConnection) -> bool:
    """True when the server has closed this idle pooled connection (it restarted, or the
    connection was terminated while it sat in the pool).

    An idle autocommit connection that listens to nothing has nothing to read unless the server
    said goodbye (its FATAL message, or end of file), so one poll of the socket tells, without a
    round trip. Without it, after a database restart, each connection left in the pool would fail
    one request with "unavailable" although the database is back.
    """
    if conn.closed:
        return True
    try:
        # poll(), not select(): a busy server has descriptors past select()'s limit of 1024.
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return False  # cannot tell: the statement itself will find out


def _gave_up() -> psycopg.OperationalError:
    return psycopg.OperationalError("every pooled connection had been closed by the server")


@contextmanager
def pooled_connection() -> Iterator[DictConnection]:
    """A connection of the store's pool that the server has not hung up on (:func:`_hung_up`);
    the others are closed, and the pool replaces them."""
    store_pool = pool()
    for _ in range(store_pool.max_size + 1):
        conn = store_pool.getconn()
        if not _hung_up(conn):
            break
        try:
            conn.close()
        finally:
            store_pool.putconn(conn)
    else:
        raise _gave_up()
    try:
        yield conn
    finally:
        store_pool.putconn(conn)


@asynccontextmanager
async def apooled_connection() -> AsyncIterator[AsyncDictConnection]:
    """A connection of this event loop's pool, taken through its admission gate: when all are
    busy, the kinds of work waiting take turns for the next one freed (todos.core.admission)."""
    store_pool = await apool()
    CIRCUIT.check()  # while the database is unreachable, refuse before queueing at the gate
    gate = store_pool.gate
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.BOARD_DB_POOL_TIMEOUT
    await gate.acquire(admission.current(), settings.BOARD_DB_POOL_TIMEOUT)
    try:
        # One wait in all: what the gate took is not waited again for the connection.
        async with _pooled(store_pool, timeout=max(deadline - loop.time(), 0.05)) as conn:
            yield conn
    finally:
        gate.release()


@asynccontextmanager
async def _pooled(
    store_pool: AsyncConnectionPool[AsyncDictConnection], *, timeout: float
) -> AsyncIterator[AsyncDictConnection]:
    for _ in range(store_pool.max_size + 1):
        conn = await store_pool.getconn(timeout=timeout)
        if not _hung_up(conn):
            break
        try:
            await conn.close()
        finally:
            await store_pool.putconn(conn)
    else:
        raise _gave_up()
    try:
        yield conn
    finally:
        await store_pool.putconn(conn)


async def aclose_pool() -> None:
    """Close this event loop's pool, for a loop about to end (a test's or a command's
    ``asyncio.run``): left open, its connections stay with the closed loop until it is collected."""
    existing = _apools.pop(asyncio.get_running_loop(), None)
    if existing is not None:
        await existing.close()


def reset_pools() -> None:
    """Close every pool and forget the circuit's state; the next use builds new ones from the
    current settings."""
    global _pool
    CIRCUIT.reset()
    with _lock:
        if _pool is not None:
            _pool.close()
            _pool = None
    for loop, ap in list(_apools.items()):
        _apools.pop(loop, None)
        if not loop.is_closed() and not loop.is_running():
            try:
                loop.run_until_complete(ap.close())
            except Exception:  # noqa: BLE001 - best effort on a dying loop
                pass


# How often a statement that lost a race to a row committed after its snapshot runs again
# (:class:`~todos.core.errors.StaleSnapshot`), or that PostgreSQL chose as a deadlock's victim.
# Each run takes a new snapshot, so one more is almost always enough; the bound only stops a
# pathological churn on one key.
STALE_SNAPSHOT_RUNS = 3


def _rerun_deadlock(exc: psycopg.errors.DeadlockDetected, autocommit: bool, run: int) -> None:
    """Re-raise ``exc`` unless the statement may simply run again.

    Two statements that take several concurrency keys' rows (a claim batch taking slots, a
    complete batch whose trigger gives them back) can wait on each other; PostgreSQL then rolls
    one back whole. On an autocommit connection that statement was its own transaction, so it
    wrote nothing and running it again is the documented answer. Inside a caller's transaction
    the transaction is aborted and only the caller can start over.
    """
    if not autocommit or run == STALE_SNAPSHOT_RUNS:
        raise exc
    logger.info("statement chosen as a deadlock victim; running it again (%s)", " ".join(str(exc).split())[:200])


def _classify(exc: psycopg.Error) -> None:
    """Turn a constraint the store's statements are written never to hit, or a database that
    cannot answer now (:mod:`todos.core.unavailable`), into a store error."""
    unavailable = classify_unavailable(exc)
    if unavailable is not None:
        raise unavailable from exc
    if isinstance(exc, psycopg.errors.ExclusionViolation):
        detail = getattr(exc.diag, "message_detail", None) or ""
        logger.error("second open attempt refused at COMMIT: %s", detail)
        raise Internal(f"a second open attempt was refused at commit ({detail})") from exc
    if isinstance(exc, psycopg.errors.UniqueViolation) and exc.diag.constraint_name == "idx_todos_dedupe":
        # A live todo took the key between the statement's snapshot and its write.
        raise Conflict("another live todo already holds this idempotency key") from exc
    if isinstance(exc, psycopg.errors.UniqueViolation) and exc.diag.constraint_name == "schedules_team_id_name_key":
        # A rename that raced another create or rename to the same name: both passed the name's
        # check on their snapshots, and an UPDATE has no ON CONFLICT (todos/core/store/schedules.py).
        raise Invalid("name", "the team already has a schedule with this name") from exc


def execute(stmt: Statement[T], conn: DictConnection | None = None) -> T:
    """Run ``stmt`` on ``conn`` (or a pooled connection) and classify its rows; while tracing is
    on, in a span named for the statement (docs/telemetry.md)."""
    if telemetry.STATE.tracer is None:
        return _execute(stmt, conn)
    with _statement_span(stmt):
        return _execute(stmt, conn)


async def aexecute(stmt: Statement[T], conn: AsyncDictConnection | None = None) -> T:
    if telemetry.STATE.tracer is None:
        return await _aexecute(stmt, conn)
    with _statement_span(stmt):
        return await _aexecute(stmt, conn)


def _statement_span(stmt: Statement[Any]):
    return telemetry.statement_span(stmt.name or "statement")


def _execute(stmt: Statement[T], conn: DictConnection | None = None) -> T:
    for run in range(1, STALE_SNAPSHOT_RUNS + 1):
        try:
            if conn is not None:
                rows = conn.execute(stmt.sql, stmt.params).fetchall()
            else:
                with pooled_connection() as pooled:
                    rows = pooled.execute(stmt.sql, stmt.params).fetchall()
        except psycopg.errors.DeadlockDetected as exc:
            _rerun_deadlock(exc, conn is None or conn.autocommit, run)
            continue
        except (
            psycopg.errors.ExclusionViolation,
            psycopg.errors.UniqueViolation,
            psycopg.OperationalError,
            psycopg.InterfaceError,
        ) as exc:
            _classify(exc)
            raise
        try:
            return stmt.finish(rows)
        except StaleSnapshot:
            if run == STALE_SNAPSHOT_RUNS:
                raise
    raise AssertionError("unreachable")


async def _aexecute(stmt: Statement[T], conn: AsyncDictConnection | None = None) -> T:
    for run in range(1, STALE_SNAPSHOT_RUNS + 1):
        try:
            if conn is not None:
                cur = await conn.execute(stmt.sql, stmt.params)
                rows = await cur.fetchall()
            else:
                async with apooled_connection() as pooled:
                    cur = await pooled.execute(stmt.sql, stmt.params)
                    rows = await cur.fetchall()
        except psycopg.errors.DeadlockDetected as exc:
            _rerun_deadlock(exc, conn is None or conn.autocommit, run)
            continue
        except (
            psycopg.errors.ExclusionViolation,
            psycopg.errors.UniqueViolation,
            psycopg.OperationalError,
            psycopg.InterfaceError,
        ) as exc:
            _classify(exc)
            raise
        try:
            return stmt.finish(rows)
        except StaleSnapshot:
            if run == STALE_SNAPSHOT_RUNS:
                raise
    raise AssertionError("unreachable")

"""The Board's reads on a streaming replica (``BOARD_READ_REPLICA_URL``; docs/deployment.md,
the read replica).

The heaviest reads at scale are the Board's pages; a hot standby can serve them while the primary
keeps the queue's writes. Only a Board page request (a safe method, not the agent API, not MCP)
may read the replica: :class:`~board.middleware.ReplicaReadsMiddleware` sets a :class:`Route` for
it in a context variable, and the selectors take their connection from :func:`read_connection`.
Anything else — every write, the agent API (an agent must see its own writes), MCP, ``LISTEN``,
the relay, the loops, a selector called outside a Board request — finds no route and reads the
primary, as it does with the variable unset.

A human must never see their own action undone: after a successful unsafe Board request the
middleware keeps the primary's WAL position in the session (:func:`remember_write`), and that
human's reads stay on the primary until the replica has replayed past it.

A replica that lags more than ``BOARD_READ_REPLICA_MAX_LAG`` seconds, or cannot be reached, is
not read: pages come from the primary and say so (:func:`status_note`, next to the live status).
Its state is checked at most once per :data:`CHECK_INTERVAL_SECONDS` per process
(:func:`replica_state`).

Two locks, one job each: ``_pool_lock`` builds the pool, ``_state_lock`` serialises the state
check, which itself takes a pooled connection (one shared non-reentrant lock deadlocked there).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import psycopg
import psycopg.conninfo
from django.conf import settings
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from todos.core import db

logger = logging.getLogger(__name__)

# How old a process's view of the replica's state may be.
CHECK_INTERVAL_SECONDS = 1.0
# A replica that does not answer within this long counts as down (connecting, and taking a pooled
# connection): a page then waits at most about this long before it reads the primary.
CONNECT_TIMEOUT_SECONDS = 2
# A replica found behind the primary by more than the threshold, judged by the time of the last
# transaction it replayed, is asked again after this pause: on a quiet primary that time is old
# while the WAL of the one commit that just happened is still on its way (milliseconds), which is
# no lag at all.
RECHECK_PAUSE_SECONDS = 0.05
# Where a session keeps the primary's WAL position after its human's last action.
SESSION_KEY = "board_read_after_lsn"
# A live refresh (static/board/live.js sends LIVE_HEADER) follows a change the primary has
# committed and the replica may not have replayed yet: it reads the replica once the replica has
# replayed the primary's position at the request, waiting up to this long (a healthy streaming
# replica is milliseconds behind), else the primary.
LIVE_HEADER = "X-Board-Live-Refresh"
LIVE_REPLAY_WAIT_SECONDS = 0.1
LIVE_REPLAY_POLL_SECONDS = 0.01

# The primary's position: a write's commit record ends at or before it once the write has returned
# (its commit waited for the flush). The flush position, not the write position: WAL written but
# not yet flushed has not been sent to the replica, which would otherwise look behind for nothing.
PRIMARY_LSN_SQL = "SELECT pg_current_wal_flush_lsn()::text AS lsn"
# The replica's side: is it a standby, has it replayed past the primary's position, and how long
# ago did the last transaction it replayed commit on the primary.
REPLICA_SQL = """
SELECT pg_is_in_recovery() AS standby,
       pg_last_wal_replay_lsn()::text AS replay_lsn,
       coalesce(pg_last_wal_replay_lsn() >= %(lsn)s::pg_lsn, false) AS caught_up,
       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS since_last_commit
"""
REPLAYED_PAST_SQL = "SELECT coalesce(pg_last_wal_replay_lsn() >= %(lsn)s::pg_lsn, false) AS replayed"


def configured() -> bool:
    return bool(settings.BOARD_READ_REPLICA_URL)


# -- the per-request route ------------------------------------------------------------------------


@dataclass
class Route:
    """One Board request's reads: the replica, unless the human's own last write (``after_lsn``)
    has not been replayed there yet or the replica is lagging or down. Decided at the first read
    and kept for the request, so one page never mixes the two servers."""

    after_lsn: str | None = None
    live: bool = False  # a live refresh: wait for the primary's position at the request
    target: str | None = None  # "replica" | "primary", once decided
    replica_failed: bool = False  # a statement on the replica failed: the request may run again


_route: ContextVar[Route | None] = ContextVar("board_read_route", default=None)


@contextmanager
def routed(route: Route | None) -> Iterator[Route | None]:
    token = _route.set(route)
    try:
        yield route
    finally:
        _route.reset(token)


# -- the replica's pool ---------------------------------------------------------------------------

_pool_lock = threading.Lock()
_pool: ConnectionPool[db.DictConnection] | None = None


def replica_conninfo() -> str:
    """``BOARD_READ_REPLICA_URL`` with a short connect timeout and, as on the primary's pools,
    ``BOARD_DB_STATEMENT_TIMEOUT``."""
    info = psycopg.conninfo.make_conninfo(settings.BOARD_READ_REPLICA_URL, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    timeout_ms = int(settings.BOARD_DB_STATEMENT_TIMEOUT * 1000)
    if timeout_ms <= 0:
        return info
    existing = psycopg.conninfo.conninfo_to_dict(info).get("options") or ""
    return psycopg.conninfo.make_conninfo(info, options=f"{existing} -c statement_timeout={timeout_ms}".strip())


def pool() -> ConnectionPool[db.DictConnection]:
    """The replica's pool: empty until used (``min_size=0``), so a replica that is down costs a
    Board process nothing at start, and a short wait for a connection."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ConnectionPool(
                    replica_conninfo(),
                    connection_class=db.DictConnection,
                    min_size=0,
                    max_size=max(settings.BOARD_DB_POOL_MAX, 1),
                    timeout=CONNECT_TIMEOUT_SECONDS,
                    reconnect_timeout=db.RECONNECT_TIMEOUT_SECONDS,
                    kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": db.prepare_threshold()},
                    name="board-read-replica",
                    open=True,
                )
    return _pool


@contextmanager
def replica_connection() -> Iterator[db.DictConnection]:
    """A pooled replica connection the server has not hung up on (a restarted replica leaves
    closed connections behind; they are dropped, not handed out)."""
    replica_pool = pool()
    for _ in range(replica_pool.max_size + 1):
        conn = replica_pool.getconn()
        if not db._hung_up(conn):
            break
        try:
            conn.close()
        finally:
            replica_pool.putconn(conn)
    else:
        raise psycopg.OperationalError("every pooled replica connection had been closed by the server")
    try:
        yield conn
    finally:
        replica_pool.putconn(conn)


# -- the replica's state --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaState:
    usable: bool
    problem: str = ""  # why not, for the status note ("replica lagging 12 s")
    lag_seconds: float | None = None
    checked_at: float = field(default_factory=time.monotonic)


_state_lock = threading.Lock()
_state: ReplicaState | None = None


def replica_state() -> ReplicaState:
    """The replica's state as this process last saw it, checked again when older than
    :data:`CHECK_INTERVAL_SECONDS` (one request checks; the others meanwhile use the last state)."""
    global _state
    state = _state
    if state is not None and time.monotonic() - state.checked_at < CHECK_INTERVAL_SECONDS:
        return state
    if state is None:
        _state_lock.acquire()  # nothing to read meanwhile: wait for the check under way, if any
    elif not _state_lock.acquire(blocking=False):
        return state  # another request is checking: use the last state meanwhile
    try:
        if _state is not None and time.monotonic() - _state.checked_at < CHECK_INTERVAL_SECONDS:
            return _state
        previous, _state = _state, check()
        if _state.problem != (previous.problem if previous is not None else ""):  # say changes only
            if _state.usable:
                logger.warning("Board reads from the read replica again")
            else:
                logger.warning("Board reads from the primary: %s", _state.problem)
        return _state
    finally:
        _state_lock.release()


def check() -> ReplicaState:
    """Compare the replica with the primary now.

    The lag is 0 when the replica has replayed past the primary's current position; otherwise it
    is the time since the last transaction the replica replayed committed on the primary (what
    it shows is at most that old), asked twice when it exceeds the threshold
    (:data:`RECHECK_PAUSE_SECONDS`).
    """
    max_lag = settings.BOARD_READ_REPLICA_MAX_LAG
    with db.pool().connection() as conn:
        primary_lsn = db.single_row(conn.execute(PRIMARY_LSN_SQL))["lsn"]
    try:
        with replica_connection() as conn:
            row = conn.execute(REPLICA_SQL, {"lsn": primary_lsn}).fetchone()
            if row and row["standby"] and not row["caught_up"] and _too_old(row["since_last_commit"], max_lag):
                time.sleep(RECHECK_PAUSE_SECONDS)
                row = conn.execute(REPLICA_SQL, {"lsn": primary_lsn}).fetchone()
    except (psycopg.Error, PoolTimeout) as exc:
        logger.info("read replica unreachable: %s", str(exc).strip().splitlines()[0] if str(exc).strip() else exc)
        return ReplicaState(usable=False, problem="replica unreachable")
    assert row is not None
    if not row["standby"]:
        return ReplicaState(usable=False, problem="replica is not a standby")
    if row["caught_up"]:
        return ReplicaState(usable=True, lag_seconds=0.0)
    lag = row["since_last_commit"]
    if lag is None:
        return ReplicaState(usable=False, problem="replica has replayed nothing yet")
    lag = max(float(lag), 0.0)
    if lag > max_lag:
        return ReplicaState(usable=False, problem=f"replica lagging {lag:.0f} s", lag_seconds=lag)
    return ReplicaState(usable=True, lag_seconds=lag)


def _too_old(since_last_commit: float | None, max_lag: float) -> bool:
    return since_last_commit is None or since_last_commit > max_lag


def forget_state() -> None:
    """Check the replica again at the next read (a connection to it failed; tests). Without the
    lock: a check under way may finish after this, and its state is as fresh as one after it."""
    global _state
    _state = None


def reset() -> None:
    """Close the replica's pool and forget its state (settings changed; tests)."""
    global _pool
    forget_state()
    with _pool_lock:
        if _pool is not None:
            _pool.close()
            _pool = None


def status_note() -> str:
    """What the Board says next to its live status while reads that could go to the replica go
    to the primary ("" when there is no replica, or it is fine)."""
    if not configured():
        return ""
    state = _state if _state is not None else replica_state()
    if state.usable:
        return ""
    return f"reads from primary: {state.problem}"


# -- reads ----------------------------------------------------------------------------------------


def _decide(route: Route) -> str:
    if route.target is not None:
        return route.target
    route.target = "primary"
    state = replica_state()
    if not state.usable:
        return route.target
    if route.live:
        if not _replayed_past(primary_lsn(), wait=LIVE_REPLAY_WAIT_SECONDS):
            return route.target
    elif route.after_lsn is not None and not _replayed_past(route.after_lsn):
        return route.target
    route.target = "replica"
    return route.target


def _replayed_past(lsn: str, *, wait: float = 0.0) -> bool:
    """Whether the replica has replayed past ``lsn`` (asked now: the state's age would hold a
    human on the primary up to a second longer than needed), asking again for up to ``wait``."""
    deadline = time.monotonic() + wait
    try:
        with replica_connection() as conn:
            while True:
                row = conn.execute(REPLAYED_PAST_SQL, {"lsn": lsn}).fetchone()
                if (row and row["replayed"]) or time.monotonic() >= deadline:
                    return bool(row and row["replayed"])
                time.sleep(LIVE_REPLAY_POLL_SECONDS)
    except (psycopg.Error, PoolTimeout):
        forget_state()
        return False


@contextmanager
def read_connection() -> Iterator[db.DictConnection]:
    """The connection a selector reads on: the replica for a Board page request when it may
    (:class:`Route`), else the primary's pool, exactly as without a replica."""
    route = _route.get()
    if route is None or not configured() or _decide(route) != "replica":
        with db.pool().connection() as conn:
            yield conn
        return
    try:
        with replica_connection() as conn:
            yield conn
    except psycopg.errors.QueryCanceled:
        raise  # the statement timeout: the same statement on the primary would meet it too
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout):
        # The replica went away mid-request, or cancelled the statement for a conflict with
        # replay: the middleware runs the (safe) request again on the primary, and the next read
        # checks the replica again.
        route.replica_failed = True
        forget_state()
        raise


def primary_lsn() -> str:
    with db.pool().connection() as conn:
        return db.single_row(conn.execute(PRIMARY_LSN_SQL))["lsn"]


# Kept when the primary's position could not be read after an action (the primary went away
# just after it committed): no replica has replayed this far, so the human reads the primary
# until a later request learns a real position. The action's answer is never turned into an error.
UNKNOWN_LSN = "FFFFFFFF/FFFFFFFF"


def _primary_lsn_or_unknown() -> str:
    from todos.core.unavailable import classify, describe

    try:
        return primary_lsn()
    except Exception as exc:
        if classify(exc) is None:
            raise
        logger.warning("read replica: the primary's position is unknown (%s): reading the primary", describe(exc))
        return UNKNOWN_LSN


def read_after_lsn(session) -> str | None:
    value = session.get(SESSION_KEY)
    if value == UNKNOWN_LSN:
        value = session[SESSION_KEY] = _primary_lsn_or_unknown()
    return value if isinstance(value, str) else None


def remember_write(session) -> None:
    """After a human's action: their next reads wait for the replica to replay past here."""
    session[SESSION_KEY] = _primary_lsn_or_unknown()


def forget_write(session) -> None:
    """The replica has replayed past the human's last action: nothing left to wait for."""
    session.pop(SESSION_KEY, None)

"""One LISTEN connection per Board process.

PostgreSQL is the bus: the relay (``relay.py``) NOTIFYs ``board_events`` from the change log the
store's statements write, the statements that make work claimable NOTIFY ``board_ready``
themselves (see ``todos/core/store/fragments.py``), and those that change an endpoint's
credential NOTIFY ``board_credentials`` (``todos/core/credential_cache.py``). Each process keeps
a single dedicated async connection listening on the Board's channels and hands every
notification to in-process subscribers. Nothing is shared between processes, so several Board
processes behind a load balancer each listen for themselves.

The connection is started lazily in the server's event loop (daphne has no ASGI lifespan), the
first time a websocket, a long poll or a token lookup needs it. If it drops, it reconnects at
once (not twice in ``AT_ONCE_SECONDS``), then with backoff (1 s doubling to 30 s), logs each loss
and recovery, and tells ``on_reconnect`` subscribers: whatever was sent while it was down is
gone, so they must resync from the database.

A connection can also die silently (a NAT or firewall forgetting an idle TCP flow): no error ever
arrives and ``notifies()`` would wait forever. So the listener stops listening every
``PROBE_INTERVAL`` seconds of its life to run ``SELECT 1`` with a deadline; notifications that
arrive meanwhile wait in psycopg's backlog and are delivered on the next round, none is lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from todos.core.credential_cache import CREDENTIALS_CHANNEL
from todos.core.store.fragments import READY_CHANNEL
from todos.live.messages import BOARD_CHANNEL

if TYPE_CHECKING:
    from todos.core.db import AsyncDictConnection

logger = logging.getLogger(__name__)

Callback = Callable[[dict], None]

BACKOFF_START = 1.0
BACKOFF_MAX = 30.0
# A dropped connection is reconnected at once, unless the last such reconnect was this recent.
AT_ONCE_SECONDS = 0.1
# How often the idle connection proves it is alive, and how long the proof may take.
PROBE_INTERVAL = 15.0
PROBE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 10  # seconds, passed to libpq


class Listener:
    channels = (BOARD_CHANNEL, READY_CHANNEL, CREDENTIALS_CHANNEL)

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.state = "connecting"  # connecting | live | reconnecting
        self._subscribers: dict[str, set[Callback]] = defaultdict(set)
        self._reconnect_subscribers: set[Callable[[], None]] = set()
        self._state_subscribers: set[Callable[[str], None]] = set()
        self._task: asyncio.Task | None = None
        self._conn: AsyncDictConnection | None = None
        self._connected = asyncio.Event()
        self.reconnects = 0  # recoveries so far (tests and logs)

    # --- subscriptions (call from the listener's event loop) -----------------------------------

    def subscribe(self, channel: str, callback: Callback) -> Callable[[], None]:
        """Call ``callback(payload_dict)`` for every notification on ``channel``. Keep it quick and
        non-blocking: it runs in the event loop. Returns the unsubscribe function."""
        self._subscribers[channel].add(callback)
        return lambda: self._subscribers[channel].discard(callback)

    def on_reconnect(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` each time listening resumes after a failure (notifications may have
        been missed). Not called for the first, clean start."""
        self._reconnect_subscribers.add(callback)
        return lambda: self._reconnect_subscribers.discard(callback)

    def on_state(self, callback: Callable[[str], None]) -> Callable[[], None]:
        self._state_subscribers.add(callback)
        return lambda: self._state_subscribers.discard(callback)

    # --- running -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._run(), name="board-listener")

    async def wait_connected(self, timeout: float = 10.0) -> bool:
        try:
            async with asyncio.timeout(timeout):
                await self._connected.wait()
            return True
        except TimeoutError:
            return False

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass
            self._task = None
        self._connected.clear()

    @property
    def backend_pid(self) -> int | None:
        """The LISTEN connection's server process id (tests terminate it to prove recovery)."""
        return self._conn.info.backend_pid if self._conn is not None and not self._conn.closed else None

    async def _run(self) -> None:
        delay = BACKOFF_START
        failed_since: float | None = None  # when the current outage began (None: no outage)
        live = False  # the connection was live until the failure at hand
        at_once = float("-inf")  # when a dropped connection was last reconnected at once
        while True:
            try:
                live = False
                await self._listen()
                if failed_since is not None:
                    self.reconnects += 1
                    logger.warning(
                        "live listener recovered after %.1f s; telling clients to resync",
                        time.monotonic() - failed_since,
                    )
                self._set_state("live")
                self._connected.set()
                if failed_since is not None:
                    failed_since = None
                    self._dispatch_reconnect()
                delay = BACKOFF_START
                live = True
                await self._pump()
            except asyncio.CancelledError:
                await self._close()
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: reconnect with backoff
                self._connected.clear()
                if live and time.monotonic() - at_once >= AT_ONCE_SECONDS:
                    # A live connection that drops (its backend was terminated, a failover) is
                    # reconnected at once: the server was there a moment ago, and until the
                    # listener is back every long poll waits without being woken.
                    failed_since = at_once = time.monotonic()
                    logger.warning("live listener lost its connection (%s); reconnecting at once", _short(exc))
                    self._set_state("reconnecting")
                    await self._close()
                    continue
                if failed_since is None:
                    failed_since = time.monotonic()
                    logger.warning("live listener lost its connection (%s); retrying in %.3g s", _short(exc), delay)
                else:
                    logger.warning("live listener still down (%s); retrying in %.3g s", _short(exc), delay)
                self._set_state("reconnecting")
                await self._close()
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)

    async def _listen(self) -> None:
        from todos.core.db import aconnect

        await self._close()
        self._conn = conn = await aconnect(connect_timeout=CONNECT_TIMEOUT, application_name="board-live-listener")
        for channel in self.channels:
            await conn.execute(f"LISTEN {channel}")

    async def _pump(self) -> None:
        """Deliver notifications until the connection fails (raises)."""
        conn = self._conn
        assert conn is not None
        while True:
            async for note in conn.notifies(timeout=PROBE_INTERVAL):
                self._dispatch(note.channel, note.payload)
            async with asyncio.timeout(PROBE_TIMEOUT):
                await conn.execute("SELECT 1")

    async def _close(self) -> None:
        """Close the connection, whatever state it is in; a cancellation of this task that arrives
        meanwhile still ends it (taking it for the close's own failure kept the event loop from
        ever shutting down: tests/test_loop_shutdown.py)."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                async with asyncio.timeout(PROBE_TIMEOUT):
                    await conn.close()
            except Exception:  # noqa: BLE001 - closing a dead connection may fail any way
                pass

    def _set_state(self, state: str) -> None:
        if state == self.state:
            return
        self.state = state
        for callback in list(self._state_subscribers):
            _safely(callback, state)

    def _dispatch(self, channel: str, raw: str) -> None:
        try:
            payload = json.loads(raw)
        except ValueError:
            logger.error("ignoring a malformed notification on %s: %.200s", channel, raw)
            return
        if not isinstance(payload, dict):
            logger.error("ignoring a notification on %s that is not an object: %.200s", channel, raw)
            return
        for callback in list(self._subscribers.get(channel, ())):
            _safely(callback, payload)

    def _dispatch_reconnect(self) -> None:
        for callback in list(self._reconnect_subscribers):
            _safely(callback)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _safely(callback, *args) -> None:
    try:
        callback(*args)
    except Exception:  # noqa: BLE001 - one bad subscriber must not stop the listener
        logger.exception("live subscriber %r failed", callback)


_listeners: dict[asyncio.AbstractEventLoop, Listener] = {}


def get_listener() -> Listener:
    """The process's listener for the running event loop, started on first use."""
    loop = asyncio.get_running_loop()
    for stale in [other for other in _listeners if other.is_closed()]:
        del _listeners[stale]  # test runs make a loop per test; daphne has just one
    listener = _listeners.get(loop)
    if listener is None:
        listener = _listeners[loop] = Listener(loop)
    listener.start()
    return listener


def current_listener() -> Listener | None:
    """The running loop's listener if one was started (does not start one)."""
    try:
        return _listeners.get(asyncio.get_running_loop())
    except RuntimeError:
        return None

"""The SDK's session manager, run lazily inside the server's event loop.

``StreamableHTTPSessionManager`` keeps the MCP sessions and serves every request through a task
group that its ``run()`` context must hold open. Starlette would enter it from an ASGI lifespan,
but daphne sends no lifespan events, so the first ``/mcp`` request of an event loop starts a
background task that enters ``run()`` and stays inside it for the life of the loop; later
requests find it running. A manager cannot be run twice, so each event loop gets its own (daphne
has one loop; tests that drive the ASGI app in-process make one per test).

Sessions are **stateful**: the ``initialize`` response hands out an ``Mcp-Session-Id``, which the
store records on each claim as ``claimer_session`` and which the ``todo_ready`` notifications are
addressed to (a sessionless server could do neither). Each session is recorded in PostgreSQL
(``todos/core/store/mcp_sessions.py``), and :meth:`Runtime.resume` lets this process serve a session
another process opened (``manager.py``), so a balancer may send any request to any process. A
session no process has seen for :data:`SESSION_IDLE_SECONDS` is over: its id answers 404, after
which the client initializes again. The runtime's task also keeps the table bounded: every
:data:`MAINTENANCE_SECONDS` it stamps the sessions whose notification stream this process holds (an
open stream is activity), drops its copy of those that ended elsewhere, and sweeps the expired ones.
The queue itself never depends on a session: leases, fences and attempts are in the database.
Clients speaking the sessionless 2026-07-28 protocol are served too, by the SDK's single-exchange
path, without a session id or notifications.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from contextlib import contextmanager

import psycopg
from django.conf import settings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from todos.agents.mcp import ready
from todos.agents.mcp.auth import (
    CREDENTIAL_KEY,
    DIGEST_KEY,
    RPC_BAD_REQUEST,
    RPC_UNAVAILABLE,
    Refused,
    header,
    refusal_for,
)
from todos.agents.mcp.manager import SessionManager, connection_of, held_sessions
from todos.agents.mcp.server import build_server
from todos.core.db import aexecute
from todos.core.errors import StoreError
from todos.core.store import mcp_sessions as sessions

logger = logging.getLogger("todos.agents.mcp")

SESSION_IDLE_SECONDS = 30 * 60
SESSION_FULL_RETRY_AFTER = 5  # seconds a client at the session limit is told to wait
# How often the runtime keeps its open streams' sessions alive and sweeps expired ones; well
# under SESSION_IDLE_SECONDS, so a session whose stream is open is never swept.
MAINTENANCE_SECONDS = 60
MAX_SESSIONS = 10_000
# The JSON-RPC envelope around a verb's arguments is small; the arguments get the API's body limit.
ENVELOPE_BYTES = 16 * 1024


class Runtime:
    """One session manager and the task that keeps its ``run()`` context open."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.manager = SessionManager(
            app=build_server(),
            json_response=False,
            stateless=False,
            # Host checking is done in auth.py against ALLOWED_HOSTS, like the rest of Board.
            security_settings=None,
            session_idle_timeout=SESSION_IDLE_SECONDS,
            max_sessions=MAX_SESSIONS,
            max_request_body_size=settings.BOARD_MAX_BODY_BYTES + ENVELOPE_BYTES,
        )
        self._ready = asyncio.Event()
        self._task: asyncio.Task | None = None
        # Sessions whose notification stream (a GET) this process is serving, and how many.
        self.streams: Counter[str] = Counter()

    @property
    def stopped(self) -> bool:
        """The manager's task ended (stopped, or crashed): a manager cannot run again."""
        return self._task is not None and self._task.done()

    async def started(self) -> SessionManager:
        if self._task is None:
            self._task = self.loop.create_task(self._run(), name="board-mcp-sessions")
        if not self._ready.is_set():
            waiter = asyncio.ensure_future(self._ready.wait())
            try:
                await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            if not self._ready.is_set():
                # The manager could not start: surface its error (this request fails with 500).
                self._task.result()
                raise RuntimeError("the MCP session manager stopped before it started")
        return self.manager

    async def _run(self) -> None:
        async with self.manager.run():
            self._ready.set()
            logger.info("MCP session manager running")
            while True:  # until the loop (or stop()) cancels us
                await asyncio.sleep(MAINTENANCE_SECONDS)
                try:
                    await self.maintain()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - the next round tries again
                    logger.exception("MCP session maintenance failed")

    async def maintain(self) -> int:
        """One round of upkeep; how many expired sessions were swept.

        The sessions whose notification stream this process holds are stamped (an open stream is
        activity, so they are never swept); this process's copies of sessions that ended
        elsewhere (DELETE on another process, or expired) are dropped, which frees them, stops
        their calls and closes their streams; and expired records are swept.
        """
        streaming = list(self.streams)
        if streaming:
            await aexecute(sessions.keep_alive(streaming))
        held = [session_id for session_id in held_sessions() if self.manager.holds(session_id)]
        if held:
            live = await aexecute(sessions.present(held, SESSION_IDLE_SECONDS))
            for session_id in held:
                if session_id not in live:
                    await self.manager.drop(session_id)
        return await aexecute(sessions.sweep(SESSION_IDLE_SECONDS))

    async def resume(self, scope: dict, session_id: str) -> None:
        """Make the session ``session_id`` of this request servable here, or :class:`Refused`.

        The session's record decides, not this process's memory: a session that ended (deleted,
        expired, never existed) is 404 and any copy of it here is dropped; a session of another
        endpoint or token is 404 too, as if it did not exist (and is left alone); a live session
        this process does not hold is restored from its record.
        """
        if not sessions.well_formed(session_id):
            raise _session_not_found()
        credential, digest = scope[CREDENTIAL_KEY], scope[DIGEST_KEY]
        try:
            found = await aexecute(sessions.lookup(session_id, credential.endpoint_id, digest, SESSION_IDLE_SECONDS))
        except (StoreError, psycopg.Error) as exc:
            raise _internal("looking up", exc) from None
        if found is not None and not found.owned:
            logger.warning("refused MCP session %s to a credential that did not open it", session_id[:8])
            raise _session_not_found()
        if found is None or found.expired:
            await self.manager.drop(session_id)
            raise _session_not_found()
        if self.manager.holds(session_id):
            return
        try:
            outcome = await self.manager.restore(found, scope.get("user"))
        except Exception as exc:  # noqa: BLE001 - logged with its traceback, answered with an id only
            logger.exception("could not restore MCP session %s", session_id[:8])
            raise _internal("restoring", exc) from None
        if outcome == "full":
            raise Refused(
                503,
                "unavailable",
                "too many open MCP sessions on this server; retry later",
                RPC_UNAVAILABLE,
                retry_after=SESSION_FULL_RETRY_AFTER,
            )
        if outcome == "unreadable":
            raise _session_not_found()

    async def end(self, scope: dict, session_id: str) -> None:
        """The client's DELETE: the record goes first, so every other process answers 404 next."""
        try:
            await aexecute(sessions.end(session_id, scope[CREDENTIAL_KEY].endpoint_id, scope[DIGEST_KEY]))
        except (StoreError, psycopg.Error) as exc:
            raise _internal("ending", exc) from None

    @contextmanager
    def streaming(self, scope: dict, session_id: str):
        """While a session's notification stream (its GET) is served by this process: the
        session is kept alive by :meth:`maintain`, and registered with this process's
        ``todo_ready`` notifier, which hears ``board_ready`` like every process's and is the one
        that can reach the client. (A second GET of the session, which the SDK refuses with 409,
        changes nothing.)"""
        self.streams[session_id] += 1
        connection = connection_of(session_id)
        if connection is not None:
            ready.notifier().track(session_id, scope[CREDENTIAL_KEY], scope[DIGEST_KEY], connection)
        try:
            yield
        finally:
            self.streams[session_id] -= 1
            if self.streams[session_id] <= 0:
                del self.streams[session_id]
                ready.notifier().forget(session_id)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass


def _internal(doing: str, exc: Exception) -> Refused:
    """``unavailable`` (503, with Retry-After) when the database cannot answer now; else
    ``internal`` with a request id, the details only in the log (``auth.refusal_for``)."""
    logger.warning("MCP session: failed %s it", doing)
    return refusal_for(exc)


def _session_not_found() -> Refused:
    return Refused(404, "not_found", "no such MCP session, or it has ended: initialize a new one", RPC_BAD_REQUEST)


def uses_sessions(scope: dict) -> bool:
    """Whether the request is on the handshake-era path, where sessions live (the SDK's own
    routing rule: a protocol-version header outside the handshake versions goes sessionless)."""
    version = header(scope, b"mcp-protocol-version")
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


_runtimes: dict[asyncio.AbstractEventLoop, Runtime] = {}


def runtime() -> Runtime:
    """This event loop's runtime (created on first use; started by :meth:`Runtime.started`)."""
    loop = asyncio.get_running_loop()
    for stale in [other for other in _runtimes if other.is_closed()]:
        del _runtimes[stale]
    found = _runtimes.get(loop)
    if found is None or found.stopped:
        found = _runtimes[loop] = Runtime(loop)
    return found

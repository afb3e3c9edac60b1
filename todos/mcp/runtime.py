"""The SDK's session manager, run lazily inside the server's event loop.

``StreamableHTTPSessionManager`` keeps the MCP sessions and serves every request through a task
group that its ``run()`` context must hold open. Starlette would enter it from an ASGI lifespan,
but daphne sends no lifespan events, so the first ``/mcp`` request of an event loop starts a
background task that enters ``run()`` and stays inside it for the life of the loop; later
requests find it running. A manager cannot be run twice, so each event loop gets its own (daphne
has one loop; tests that drive the ASGI app in-process make one per test).

Sessions are **stateful**: the ``initialize`` response hands out an ``Mcp-Session-Id``, which the
store records on each claim as ``claimer_session`` and which the ``todo_ready`` notifications are
addressed to (a sessionless server could do neither). They live in this process's memory, so
behind a load balancer a client must stick to one process (most balancers do this by the
``Mcp-Session-Id`` header); a session that has had no request in flight for
:data:`SESSION_IDLE_SECONDS` is closed and its id answers 404, after which the client initializes
again. The queue itself never depends on a session: leases, fences and attempts are in the database.
Clients speaking the sessionless 2026-07-28 protocol are served too, by the SDK's single-exchange
path, without a session id or notifications.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from todos.mcp.server import build_server

logger = logging.getLogger("todos.mcp")

SESSION_IDLE_SECONDS = 30 * 60
MAX_SESSIONS = 10_000
# The JSON-RPC envelope around a verb's arguments is small; the arguments get the API's body limit.
ENVELOPE_BYTES = 16 * 1024


class Runtime:
    """One session manager and the task that keeps its ``run()`` context open."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.manager = StreamableHTTPSessionManager(
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

    @property
    def stopped(self) -> bool:
        """The manager's task ended (stopped, or crashed): a manager cannot run again."""
        return self._task is not None and self._task.done()

    async def started(self) -> StreamableHTTPSessionManager:
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
            await asyncio.Event().wait()  # until the loop (or stop()) cancels us

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass


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

"""``/mcp`` in Board's one ASGI application.

:func:`mount` puts :class:`McpApp` in front of the Django application: HTTP requests whose path is
``/mcp`` or starts with ``/mcp/`` go to MCP, everything else (and every other scope type) goes
on to Django untouched. :class:`McpApp` authenticates the request (``auth.py``; a refusal is
answered here, before the MCP layer), starts the SDK's session manager if this event loop has
none running yet (``runtime.py``), makes the request's session servable here (its PostgreSQL
record decides: a session opened by another process is restored, one that ended is 404), and
hands the request to the manager.

A session's notification stream (its GET) is registered with the ``todo_ready`` notifier of the
process serving it, for as long as it is open: that process hears ``board_ready`` like every
other and is the one that can reach the client. A DELETE removes the session's record first, so
every process answers 404 to it from then on.

The SDK does not stop a tool call when the client hangs up on its POST (it keeps the stream's
events for a client that resumes), so a ``claim_next`` long poll would go on waiting, and could
claim a todo for nobody. The app therefore watches the request's ``http.disconnect`` (the SDK's
SSE response listens for it) and sets ``scope["board.client_gone"]``, the same event the HTTP
transport gives its long polls, which ``claim_next`` stops waiting on.

Whatever fails outside the SDK's own handling (the bearer lookup finding the database down, or
anything unexpected before a response has started) is answered as a JSON-RPC error by
:func:`~todos.agents.mcp.auth.refusal_for` — ``unavailable`` (503, ``Retry-After``) or ``internal`` (500)
— never as the server's HTML error page. A tool call that meets the outage is a tool error
``unavailable: …``, like any other store error (``server.py``).

The MCP endpoint is ``/mcp/``; ``/mcp`` is served the same, so a configuration without the
trailing slash works without a redirect (the SDK's client does not follow redirects that change
the path). Anything below it (``/mcp/x``) is 404.

The MCP SDK takes seconds of CPU to import, so this module does not import it (nor
``auth``/``runtime``, which do): :class:`Mount` routes without it, and :class:`McpApp` imports them
on the process's first ``/mcp/`` request, in a thread (:func:`sdk_loaded`), so the event loop
keeps serving meanwhile and only MCP requests wait for it. A process that never serves MCP never
pays for it. (Importing it in the background as every server started slowed every request of the
first seconds: the import holds the interpreter's lock, and the live pipeline's p99 went from
0.1 s to 0.4–0.9 s in a benchmark's first 15 s; bench/README.md, "The agent path under load".)
"""

from __future__ import annotations

import asyncio
import json
import threading
from importlib import import_module

from todos.agents.api.asgi import GONE_SCOPE_KEY
from todos.agents.api.errors import error_body

PREFIX = "/mcp"
ENDPOINT_PATHS = frozenset({"/mcp", "/mcp/"})


def is_mcp_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


# Set once the SDK is imported. A thread-level flag and lock, not a future: a future belongs to one
# event loop, and a process may serve from several (each test's loop), one of them closing while
# the import ran.
_loaded = threading.Event()
_loading = threading.Lock()


async def sdk_loaded() -> None:
    """Import the MCP SDK (through ``runtime`` and ``auth``) once per process, in a thread; a
    request that arrives meanwhile waits in its own thread for the same import."""
    if not _loaded.is_set():
        await asyncio.to_thread(_load_once)


def _load_once() -> None:
    with _loading:
        if not _loaded.is_set():
            _import_sdk()
            _loaded.set()


def _import_sdk() -> None:
    import_module("todos.agents.mcp.runtime")
    import_module("todos.agents.mcp.auth")


class McpApp:
    """The MCP endpoint as an ASGI application (HTTP only)."""

    async def __call__(self, scope, receive, send):
        if scope.get("path") not in ENDPOINT_PATHS:
            return await _not_found(send)
        await sdk_loaded()
        from todos.agents.mcp.auth import refusal_for, send_refusal

        started = False

        async def sending(message: dict) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self._serve(scope, receive, sending)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if started:
                raise
            await send_refusal(send, refusal_for(exc))

    async def _serve(self, scope, receive, send):
        from todos.agents.mcp.auth import Refused, authenticate_scope, header, send_refusal
        from todos.agents.mcp.runtime import runtime, uses_sessions

        try:
            scope = await authenticate_scope(scope)
        except Refused as refused:
            return await send_refusal(send, refused)
        current = runtime()
        manager = await current.started()
        session_id = header(scope, b"mcp-session-id") if uses_sessions(scope) else None
        if session_id is not None:
            try:
                await current.resume(scope, session_id)
                if scope["method"] == "DELETE":
                    await current.end(scope, session_id)
            except Refused as refused:
                return await send_refusal(send, refused)
        gone = asyncio.Event()

        async def watched() -> dict:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            return message

        scope = {**scope, GONE_SCOPE_KEY: gone}
        if session_id is not None and scope["method"] == "GET":
            with current.streaming(scope, session_id):
                return await manager.handle_request(scope, watched, send)
        await manager.handle_request(scope, watched, send)


class Mount:
    """Route ``/mcp`` HTTP requests to :class:`McpApp` and the rest to ``app``."""

    def __init__(self, app, mcp=None):
        self.app = app
        self.mcp = mcp or McpApp()

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "http" and is_mcp_path(scope.get("path", "")):
            return await self.mcp(scope, receive, send)
        return await self.app(scope, receive, send)


def mount(app) -> Mount:
    return Mount(app)


async def _not_found(send) -> None:
    body = json.dumps(error_body("not_found", "the MCP endpoint is /mcp/")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""The official MCP client, connected to a live Board, as the tests use it.

``mcp_client(url, token)`` is an initialized ``ClientSession`` over the SDK's streamable-HTTP
transport; it also reports the MCP session id the server handed out (to find it on attempts).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
from mcp.client import ClientSession, NotificationBinding
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

TIMEOUT = 20.0


class TodoReady(BaseModel):
    queue: str


@dataclass
class Inbox:
    """``notifications/todo_ready`` as the client received them, in order."""

    queues: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def receive(self, params: TodoReady) -> None:
        self.queues.append(params.queue)
        self.changed.set()

    def binding(self) -> NotificationBinding:
        return NotificationBinding(method="notifications/todo_ready", params_type=TodoReady, handler=self.receive)

    async def wait_for(self, queue: str, timeout: float = 5.0) -> bool:
        """True once ``queue`` has arrived (since the last :meth:`clear`), False after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while queue not in self.queues:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                return queue in self.queues
        return True

    def clear(self) -> None:
        self.queues.clear()
        self.changed.clear()


@dataclass
class Connected:
    session: ClientSession
    seen: dict = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        """The ``Mcp-Session-Id`` the server handed out at ``initialize``."""
        return self.seen.get("session_id")


@asynccontextmanager
async def mcp_client(
    base_url: str, token: str | None, *, inbox: Inbox | None = None, path: str = "/mcp/", transport=None
):
    """An initialized MCP session for ``token`` (no Authorization header when None); ``transport``
    replaces httpx's own (the balanced tests route each request through a round robin)."""
    seen: dict = {}

    async def watch(response: httpx2.Response) -> None:
        if response.headers.get("mcp-session-id"):
            seen["session_id"] = response.headers["mcp-session-id"]

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    timeout = httpx2.Timeout(TIMEOUT, read=120.0)
    extra = {"transport": transport} if transport is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks={"response": [watch]}, **extra) as http:
        async with streamable_http_client(base_url + path, http_client=http) as (read, write):
            bindings = [inbox.binding()] if inbox is not None else []
            async with ClientSession(
                read, write, read_timeout_seconds=TIMEOUT, notification_bindings=bindings
            ) as session:
                await session.initialize()
                yield Connected(session, seen)


def mcp_error(exc: BaseException) -> MCPError | None:
    """The ``MCPError`` in ``exc``: the client's task groups wrap what fails while they run
    (an ``initialize`` refused with 401, say) in exception groups."""
    if isinstance(exc, MCPError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = mcp_error(inner)
        if found is not None:
            return found
    return None


async def refused(url: str, token: str | None) -> MCPError:
    """The error with which the server refuses to open a session for ``token``."""
    try:
        async with mcp_client(url, token):
            pass
    except BaseException as exc:  # noqa: BLE001 - looking for the MCPError inside
        found = mcp_error(exc)
        if found is None:
            raise
        return found
    raise AssertionError("the session opened")


def run(coro, timeout: float = 90.0):
    """Run one test scenario on a fresh event loop, bounded; then close what the loop opened
    in this process (in-process tests run the MCP app and the store's async pool here)."""

    async def bounded():
        try:
            return await asyncio.wait_for(coro, timeout)
        finally:
            await shutdown_loop()

    return asyncio.run(bounded())


async def shutdown_loop() -> None:
    from todos.agents.mcp import runtime
    from todos.core import db

    loop = asyncio.get_running_loop()
    found = runtime._runtimes.pop(loop, None)
    if found is not None:
        await found.stop()
    pool = db._apools.pop(loop, None)
    if pool is not None:
        await pool.close()


@dataclass
class HeldStream:
    """A GET of server notifications driven by hand against an ASGI app (httpx's ASGI transport
    would wait for the end of the stream): :meth:`hang_up` is the client going away."""

    task: asyncio.Task
    sent: list
    gone: asyncio.Event

    @property
    def status(self) -> int | None:
        return self.sent[0]["status"] if self.sent else None

    async def hang_up(self, timeout: float = 5.0) -> None:
        self.gone.set()
        await asyncio.wait_for(self.task, timeout)


def hold_stream(app, headers: dict) -> HeldStream:
    """Open ``GET /mcp/`` with ``headers`` on ``app`` (in the running loop)."""
    sent: list = []
    gone = asyncio.Event()
    requested = False

    async def receive():
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/mcp/",
        "raw_path": b"/mcp/",
        "root_path": "",
        "query_string": b"",
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"Host": "testserver", **headers}.items()],
    }
    return HeldStream(asyncio.create_task(app(scope, receive, send)), sent, gone)

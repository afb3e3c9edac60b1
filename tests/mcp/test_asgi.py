"""The ``/mcp`` mount and its failure paths, driven in-process (ASGI) where the live server cannot
reach them: the routing, a Host outside ``ALLOWED_HOSTS``, a credential lookup that fails, a
verb that raises, and the session manager's lifecycle per event loop."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager

import httpx
import pytest

from tests.mcp.client import hold_stream, run
from todos.agents.mcp import asgi, auth, runtime, server
from todos.core.errors import Internal

MODERN = {
    "MCP-Protocol-Version": "2026-07-28",
    "Accept": "application/json, text/event-stream",
    "Mcp-Method": "tools/call",
}
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def tool_call(name: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE},
    }


async def post(app, token: str | None, body: dict, *, host: str = "testserver", path: str = "/mcp/") -> httpx.Response:
    headers = {**MODERN, "Mcp-Name": body["params"]["name"], "Host": host}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await client.post(path, json=body, headers=headers)


class Recorder:
    """An ASGI app that only notes which scopes reached it."""

    def __init__(self):
        self.paths: list[tuple[str, str]] = []

    async def __call__(self, scope, receive, send):
        self.paths.append((scope["type"], scope.get("path", "")))


def test_the_mount_sends_only_mcp_http_paths_to_mcp():
    django, mcp = Recorder(), Recorder()
    mount = asgi.Mount(django, mcp)

    async def scenario():
        for kind, path in [
            ("http", "/mcp"),
            ("http", "/mcp/"),
            ("http", "/mcp/tools"),
            ("http", "/mcpx"),
            ("http", "/api/v1/claim"),
            ("http", "/"),
            ("websocket", "/mcp/"),
            ("lifespan", ""),
        ]:
            await mount({"type": kind, "path": path}, None, None)

    asyncio.run(scenario())
    assert mcp.paths == [("http", "/mcp"), ("http", "/mcp/"), ("http", "/mcp/tools")]
    assert django.paths == [
        ("http", "/mcpx"),
        ("http", "/api/v1/claim"),
        ("http", "/"),
        ("websocket", "/mcp/"),
        ("lifespan", ""),
    ]


def test_paths_below_the_endpoint_are_not_found():
    response = run(post(asgi.McpApp(), None, tool_call("get_default_lease", {}), path="/mcp/tools"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_host_outside_allowed_hosts_is_refused_before_the_token():
    response = run(post(asgi.McpApp(), "whatever", tool_call("get_default_lease", {}), host="evil.example"))
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("invalid: the Host header")


def test_a_failing_credential_lookup_is_a_500_with_a_request_id_only(monkeypatch, caplog):
    async def broken(header):
        raise Internal("connection refused to db.internal:5432")

    monkeypatch.setattr(auth, "authenticate", broken)
    with caplog.at_level(logging.ERROR, logger="todos.agents.mcp"):
        response = run(post(asgi.McpApp(), "whatever", tool_call("get_default_lease", {})))
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == -32603 and error["message"].startswith("internal: internal error (request id ")
    assert "db.internal" not in response.text
    assert "db.internal" in caplog.text


@pytest.mark.parametrize(
    ("failure", "logged"),
    [(RuntimeError("secret detail"), "Traceback"), (Internal("secret detail"), "secret detail")],
)
def test_a_verb_that_fails_unexpectedly_is_an_internal_tool_error(monkeypatch, caplog, tenancy, failure, logged):
    async def broken(verb, call, args):
        raise failure

    monkeypatch.setattr(server, "run", broken)
    with caplog.at_level(logging.ERROR, logger="todos.agents.mcp"):
        response = run(post(asgi.McpApp(), tenancy.token, tool_call("get_default_lease", {})))
    result = response.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True and text.startswith("internal: internal error (request id ")
    assert "secret" not in text
    request_id = text.rsplit(" ", 1)[-1].rstrip(")")
    assert request_id in caplog.text and logged in caplog.text


def test_each_event_loop_runs_its_own_session_manager():
    async def in_a_loop():
        first = runtime.runtime()
        manager = await first.started()
        assert runtime.runtime() is first and await first.started() is manager
        await first.stop()
        assert first.stopped
        # A stopped manager cannot run again: the loop gets a fresh one.
        second = runtime.runtime()
        assert second is not first
        await second.started()
        return first, second

    first_a, second_a = run(in_a_loop())
    first_b, _ = run(in_a_loop())
    assert first_b is not first_a and first_b.manager is not first_a.manager


def test_a_manager_that_cannot_start_fails_the_request():
    async def scenario():
        found = runtime.runtime()

        @asynccontextmanager
        async def broken():
            raise RuntimeError("no task group for you")
            yield  # pragma: no cover

        found.manager.run = broken
        with pytest.raises(RuntimeError, match="no task group for you"):
            await found.started()
        assert found.stopped and runtime.runtime() is not found

    run(scenario())


def test_a_notification_stream_is_registered_for_todo_ready_while_it_is_open(tenancy):
    """The notifier learns a session when its GET stream opens in this process, and forgets it
    when that stream closes: ``todo_ready`` is sent by the process that can reach the client."""
    from todos.agents.mcp import ready
    from todos.live.listener import current_listener

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"Authorization": f"Bearer {tenancy.token}", "Accept": "application/json, text/event-stream"}

    async def scenario():
        app = asgi.McpApp()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=headers) as http:
            opened = await http.post("/mcp/", json=initialize)
            session_id = opened.headers["mcp-session-id"]
            common = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
            await http.post("/mcp/", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=common)
            notifier = ready.notifier()
            before_stream = session_id in notifier.sessions

            stream = hold_stream(app, {**headers, **common, "Accept": "text/event-stream"})
            for _ in range(200):
                if session_id in notifier.sessions and stream.sent:
                    break
                await asyncio.sleep(0.01)
            live = notifier.sessions.get(session_id)
            registered = live is not None and live.queues == frozenset({"default", "other"})
            status = stream.status
            await stream.hang_up()
            forgotten = session_id not in notifier.sessions
            closed = await http.delete("/mcp/", headers=common)
            await current_listener().stop()
            return before_stream, status, registered, forgotten, closed.status_code

    assert run(scenario()) == (False, 200, True, True, 200)


def test_the_server_refuses_a_request_that_skipped_authentication():
    """Mounted without ``McpApp`` in front (a wiring mistake), a call has no credential to act
    with: the server answers a JSON-RPC error instead of acting for nobody."""

    async def bare(scope, receive, send):
        manager = await runtime.runtime().started()
        await manager.handle_request(scope, receive, send)

    response = run(post(bare, None, tool_call("get_default_lease", {})))
    error = response.json()["error"]
    assert error["code"] == -32001 and error["message"] == "unauthorized: no credential on this request"


def test_the_sdk_is_imported_once_in_a_thread_while_the_event_loop_keeps_serving(monkeypatch):
    """The process's first /mcp/ requests wait for one import; the rest of the server does not."""
    import threading
    import time as time_module

    imports: list[str] = []

    def slow_import() -> None:
        imports.append(threading.current_thread().name)
        time_module.sleep(0.3)  # holds a thread, not the event loop

    monkeypatch.setattr(asgi, "_import_sdk", slow_import)
    monkeypatch.setattr(asgi, "_loaded", threading.Event())

    async def scenario():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticking = asyncio.ensure_future(ticker())
        await asyncio.gather(*(asgi.sdk_loaded() for _ in range(3)))
        during = ticks
        await asgi.sdk_loaded()  # loaded: no second import
        ticking.cancel()
        return during

    during = asyncio.run(scenario())
    assert len(imports) == 1 and imports[0] != threading.main_thread().name
    assert during >= 15  # the loop ran on through the 0.3 s import

"""MCP behind a round-robin balancer: two real Board processes (daphne) on one PostgreSQL, and a
client whose every HTTP request goes to the other process than the one before.

The round robin is a transport of the client's own HTTP client (:class:`RoundRobin`): each request
is sent to the next upstream in turn, exactly as a balancer that alternates per request would
send it, and the transport notes which process served what. Sessions are recorded in PostgreSQL
(``todos/core/store/mcp_sessions.py``), so either process serves a session the other opened; the GET stream
of notifications is held by whichever process it reached, which hears ``board_ready`` like the
other and sends ``todo_ready`` to it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import anyio
import httpx
import httpx2
import pytest

from tests import factories
from tests.mcp.client import Inbox, mcp_client, run
from tests.support.live_server import start_server, stop_server
from todos.core.db import connect, execute
from todos.core.store import agent as store

ACCEPT = "application/json, text/event-stream"
VERSION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.fixture(scope="module")
def second(django_db_setup):
    """A second Board process on the same database as ``asgi_server``."""
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)


@dataclass
class Served:
    upstream: str
    http_method: str
    rpc_method: str | None
    tool: str | None = None


@dataclass
class RoundRobin(httpx2.AsyncBaseTransport):
    """A round-robin balancer inside the client: each request goes to the next upstream.

    With ``stream_to``, the GET of notifications goes there instead (and the others keep
    alternating), so a test can choose which process holds the stream.
    """

    upstreams: list[str]
    stream_to: str | None = None
    served: list[Served] = field(default_factory=list)

    def __post_init__(self):
        self._inner = httpx2.AsyncHTTPTransport()
        self._turn = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and self.stream_to is not None:
            base = httpx2.URL(self.stream_to)
        else:
            base = httpx2.URL(self.upstreams[self._turn % len(self.upstreams)])
            self._turn += 1
        request.url = request.url.copy_with(host=base.host, port=base.port)
        request.headers["host"] = f"{base.host}:{base.port}"
        self.served.append(Served(str(base).rstrip("/"), request.method, *_rpc_of(request)))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def upstreams_of(self, rpc_method: str) -> set[str]:
        return {s.upstream for s in self.served if s.rpc_method == rpc_method}

    def upstreams_of_get(self) -> set[str]:
        return {s.upstream for s in self.served if s.http_method == "GET"}

    def upstream_of_tool(self, tool: str) -> str:
        [upstream] = [s.upstream for s in self.served if s.tool == tool]
        return upstream


def _rpc_of(request: httpx2.Request) -> tuple[str | None, str | None]:
    """The JSON-RPC method of a POST, and the tool's name for tools/call."""
    try:
        body = json.loads(request.content or b"null")
    except (ValueError, httpx2.RequestNotRead):
        return None, None
    if not isinstance(body, dict):
        return None, None
    params = body.get("params") if isinstance(body.get("params"), dict) else {}
    return body.get("method"), params.get("name") if body.get("method") == "tools/call" else None


async def ok(session, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content[0].text}"
    return result.structured_content


def claimer_sessions(todo_id: str) -> list[str | None]:
    with connect() as conn:
        rows = conn.execute("SELECT claimer_session FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (todo_id,))
        return [row["claimer_session"] for row in rows.fetchall()]


def session_row(session_id: str) -> dict | None:
    with connect() as conn:
        return conn.execute("SELECT * FROM mcp_sessions WHERE id = %s", (session_id,)).fetchone()


def test_a_client_alternating_between_two_processes_works_the_queue(url, second, tenancy):
    balancer = RoundRobin([url, second.url])

    async def scenario():
        async with mcp_client(url, tenancy.token, transport=balancer) as client:
            s = client.session
            listed = await s.list_tools()
            created = await ok(s, "create_for", {"queue": "default", "title": "balanced work"})
            claimed = await ok(s, "claim_next", {"queue": "default", "require_fence": True, "lease_ttl_seconds": 120})
            todo_id, token = claimed["todo"]["id"], claimed["lease_token"]
            beat = await ok(s, "heartbeat", {"id": todo_id, "lease_token": token, "lease_ttl_seconds": 300})
            done = await ok(
                s, "complete", {"id": todo_id, "lease_token": token, "summary": "done across two processes"}
            )
            recorded = session_row(client.session_id)
            return client.session_id, listed, created, claimed, beat, done, recorded

    session_id, listed, created, claimed, beat, done, recorded = run(scenario())
    assert "claim_next" in {tool.name for tool in listed.tools}
    assert claimed["todo"]["id"] == created["todo"]["id"]
    assert beat["todo"]["lease_expires_at"] > claimed["todo"]["lease_expires_at"]
    assert done["todo"]["state"] == "done"
    # Served by both processes: each step of the cycle by the other one than the step before.
    assert balancer.upstreams_of("tools/call") == {url, second.url}
    claim, beat_on, complete = (balancer.upstream_of_tool(t) for t in ("claim_next", "heartbeat", "complete"))
    assert claim != beat_on and beat_on != complete
    assert len({s.upstream for s in balancer.served}) == 2
    # One session throughout: recorded once, and on the attempt whichever process served the claim.
    assert recorded is not None and str(recorded["endpoint_id"]) == str(tenancy.worker.endpoint.id)
    assert claimer_sessions(claimed["todo"]["id"]) == [session_id]
    # The client's DELETE (to one process) ended the session for both.
    assert session_row(session_id) is None


@pytest.mark.parametrize("stream_on", ["opener", "other"])
def test_todo_ready_reaches_the_client_whichever_process_the_work_arrives_through(url, second, tenancy, stream_on):
    """The notification stream (the client's GET) is held by one process, the one that opened the
    session or the other; work created through the API of either process is announced on it."""
    holder = url if stream_on == "opener" else second.url
    balancer = RoundRobin([url, second.url], stream_to=holder)

    async def create_through(base: str, title: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=20) as http:
            response = await http.post(
                "/api/v1/create_for",
                json={"queue": "other", "title": title},
                headers={"Authorization": f"Bearer {tenancy.token}"},
            )
            assert response.status_code == 201, response.text

    async def announced_through(base: str) -> bool:
        # The stream is being opened concurrently with the first calls: retry until it delivers.
        for attempt in range(15):
            inbox.clear()
            await create_through(base, f"via {base} #{attempt}")
            if await inbox.wait_for("other", timeout=1.0):
                return True
        return False

    inbox = Inbox()

    async def scenario():
        async with mcp_client(url, tenancy.token, inbox=inbox, transport=balancer):
            return await announced_through(url), await announced_through(second.url)

    through_first, through_second = run(scenario())
    assert through_first and through_second
    assert balancer.upstreams_of("initialize") == {url}
    assert balancer.upstreams_of_get() == {holder}


def raw_session(http: httpx.Client, base: str, token: str) -> str:
    """initialize + initialized on ``base``; the session id."""
    auth = {"Accept": ACCEPT, "Authorization": f"Bearer {token}"}
    opened = http.post(base + "/mcp/", json=INITIALIZE, headers=auth)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    sent = http.post(
        base + "/mcp/",
        json=INITIALIZED,
        headers={**auth, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION},
    )
    assert sent.status_code == 202
    return session_id


def on(
    http: httpx.Client, base: str, token: str, session_id: str, method: str = "POST", body: dict | None = LISTING
) -> httpx.Response:
    headers = {
        "Accept": ACCEPT,
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": VERSION,
    }
    if method == "POST":
        return http.post(base + "/mcp/", json=body, headers=headers)
    return http.request(method, base + "/mcp/", headers=headers)


def test_a_session_is_never_usable_with_another_endpoints_token_on_any_process(url, second, tenancy):
    intruder = factories.endpoint(tenancy.team, slug="intruder", queues=("default", "other"))
    with httpx.Client(timeout=20) as http:
        session_id = raw_session(http, url, tenancy.token)
        # On the process that does not hold the session (it would restore it)...
        assert on(http, second.url, intruder.token, session_id).status_code == 404
        # ...and on the one that does.
        assert on(http, url, intruder.token, session_id).status_code == 404
        # Not even to end it.
        assert on(http, second.url, intruder.token, session_id, "DELETE").status_code == 404
        # The owner goes on, on both processes.
        for base in (second.url, url):
            listed = on(http, base, tenancy.token, session_id)
            assert listed.status_code == 200 and "create_for" in listed.text
    assert session_row(session_id) is not None


def test_a_session_ended_on_one_process_is_404_on_both_and_the_client_starts_again(url, second, tenancy):
    with httpx.Client(timeout=20) as http:
        session_id = raw_session(http, url, tenancy.token)
        assert on(http, second.url, tenancy.token, session_id).status_code == 200  # both hold it now
        assert on(http, second.url, tenancy.token, session_id, "DELETE").status_code == 200
        for base in (url, second.url):
            gone = on(http, base, tenancy.token, session_id)
            assert gone.status_code == 404
            assert gone.json()["error"]["message"].startswith("not_found: ")
        # What a client does on 404: initialize again, on whichever process.
        fresh = raw_session(http, second.url, tenancy.token)
        assert fresh != session_id and on(http, url, tenancy.token, fresh).status_code == 200


def test_an_expired_session_is_404_on_every_process(url, second, tenancy):
    with httpx.Client(timeout=20) as http:
        session_id = raw_session(http, url, tenancy.token)
        with connect() as conn:
            conn.execute(
                "UPDATE mcp_sessions SET last_seen_at = now() - interval '31 minutes' WHERE id = %s", (session_id,)
            )
        assert on(http, second.url, tenancy.token, session_id).status_code == 404
        assert on(http, url, tenancy.token, session_id).status_code == 404


def test_a_session_outlives_the_process_that_opened_it(url, tenancy, django_db_setup):
    third = start_server()
    try:
        with httpx.Client(timeout=20) as http:
            session_id = raw_session(http, third.url, tenancy.token)
    finally:
        stop_server(third)
    with httpx.Client(timeout=20) as http:
        listed = on(http, url, tenancy.token, session_id)
    assert listed.status_code == 200 and "create_for" in listed.text


@pytest.mark.parametrize("session_id", ["not-a-session", "0" * 31 + "g", "a" * 5000])
def test_a_malformed_session_id_is_404(url, tenancy, session_id):
    with httpx.Client(timeout=20) as http:
        response = on(http, url, tenancy.token, session_id)
    assert response.status_code == 404
    assert response.json()["error"]["message"].startswith("not_found: ")


def test_a_cancel_that_reaches_another_process_does_not_stop_the_long_poll(url, second, tenancy):
    """Pinned limitation (docs/mcp.md, "Several processes"): ``notifications/cancelled`` is
    applied by the process that serves the call. Behind a round robin the cancel reaches the
    other process, so the long poll goes on until work arrives or ``wait_seconds`` pass, and work
    it finds is leased to the session (the lease expires unless the agent heartbeats). A client
    that hangs up instead stops it on any process (``test_cycle``)."""
    balancer = RoundRobin([url, second.url], stream_to=url)

    async def scenario():
        async with mcp_client(url, tenancy.token, transport=balancer) as client:
            with anyio.move_on_after(1.0):
                await client.session.call_tool("claim_next", {"queue": "default", "wait_seconds": 8})
                raise AssertionError("the poll answered")
            await asyncio.sleep(0.5)  # the cancel is a notification of its own: let it land
            todo = execute(store.create(tenancy.agent, queue="default", title="after the cancel")).todo
            state = None
            for _ in range(50):
                state = todo_state(todo.id)
                if state != "pending":
                    break
                await asyncio.sleep(0.1)
            return client.session_id, todo.id, state

    session_id, todo_id, state = run(scenario())
    [call] = [s.upstream for s in balancer.served if s.rpc_method == "tools/call"]
    [cancel] = [s.upstream for s in balancer.served if s.rpc_method == "notifications/cancelled"]
    assert call != cancel
    assert state == "claimed" and claimer_sessions(todo_id) == [session_id]


def todo_state(todo_id: str) -> str:
    with connect() as conn:
        return conn.execute("SELECT state FROM todos WHERE id = %s", (todo_id,)).fetchone()["state"]


def test_when_the_process_holding_the_stream_dies_the_session_goes_on_elsewhere(url, tenancy, django_db_setup):
    """The process that opened the session and held its notification stream is killed; the
    balancer (here: the round robin, told by its health check) sends everything to the survivor:
    the client's stream reconnects there, its calls go on in the same session, and todo_ready
    arrives through the survivor."""
    doomed = start_server()
    balancer = RoundRobin([doomed.url, url], stream_to=doomed.url)
    inbox = Inbox()

    async def announced() -> bool:
        for attempt in range(15):
            inbox.clear()
            execute(store.create(tenancy.agent, queue="other", title=f"ready #{attempt}"))
            if await inbox.wait_for("other", timeout=1.0):
                return True
        return False

    async def scenario():
        async with mcp_client(doomed.url, tenancy.token, inbox=inbox, transport=balancer) as client:
            before = await announced()
            doomed.process.kill()
            doomed.process.wait(timeout=10)
            balancer.upstreams, balancer.stream_to = [url], url  # the balancer's health check
            after = await announced()
            claimed = await ok(client.session, "claim_next", {"queue": "other", "require_fence": True})
            done = await ok(
                client.session,
                "complete",
                {"id": claimed["todo"]["id"], "lease_token": claimed["lease_token"], "summary": "ok"},
            )
            return client.session_id, before, after, claimed, done

    try:
        session_id, before, after, claimed, done = run(scenario())
    finally:
        stop_server(doomed)
    assert before and after
    assert balancer.upstreams_of("initialize") == {doomed.url}
    assert balancer.upstreams_of_get() == {doomed.url, url}
    assert done["todo"]["state"] == "done" and claimer_sessions(claimed["todo"]["id"]) == [session_id]

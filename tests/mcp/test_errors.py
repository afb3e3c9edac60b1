"""Every refusal over MCP: tool errors carrying the agent API's codes, protocol errors for what
is not a tool at all, and HTTP 401 (before the MCP layer) for a bad token, on every request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests import factories
from tests.mcp.client import mcp_client, refused, run
from tests.support.api import eventually_async
from todos.core.db import execute
from todos.core.store import agent as store
from todos.core.store import endpoints

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def tool_error(session, tool: str, arguments: dict) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} succeeded: {result.structured_content}"
    assert result.structured_content is None
    return result.content[0].text


def errors_for(url: str, token: str, calls: list[tuple[str, dict]]) -> list[str]:
    async def scenario():
        async with mcp_client(url, token) as client:
            return [await tool_error(client.session, tool, arguments) for tool, arguments in calls]

    return run(scenario())


# --- scope -----------------------------------------------------------------------------------


def test_a_tool_outside_the_scope_is_forbidden(url, tenancy):
    reader = factories.endpoint(tenancy.team, verbs=["list_todos"])
    claimed_next, batch, completed = errors_for(
        url, reader.token, [("claim_next", {}), ("claim_batch", {"max": 1}), ("complete", {"id": "td_x"})]
    )
    assert claimed_next == "forbidden: this endpoint may not call claim_next (not in its scope_verbs)"
    assert batch.startswith("forbidden: this endpoint may not call claim_batch")
    assert completed.startswith("forbidden: ")


def test_scope_is_checked_before_the_arguments(url, tenancy):
    reader = factories.endpoint(tenancy.team, verbs=["list_todos"])
    [message] = errors_for(url, reader.token, [("claim_next", {"wait_seconds": "soon"})])
    assert message.startswith("forbidden: ")


def test_a_queue_outside_the_scope_is_forbidden(url, tenancy):
    [created] = errors_for(url, tenancy.token, [("create_for", {"queue": "payroll", "title": "x"})])
    assert created.startswith("forbidden: ") and "payroll" in created


# --- not found, conflict ---------------------------------------------------------------------


def test_another_teams_todo_is_not_found(url, tenancy):
    other_team = factories.team()
    stranger = factories.endpoint(other_team, slug="stranger", queues=("default",))
    foreign = execute(store.create(factories.agent(stranger), queue="default", title="not yours")).todo
    messages = errors_for(
        url,
        tenancy.token,
        [
            ("get_todo", {"id": foreign.id}),
            ("claim", {"id": foreign.id}),
            ("heartbeat", {"id": foreign.id}),
            ("complete", {"id": foreign.id}),
            ("get_todo", {"id": "td_0000"}),
        ],
    )
    assert all(m.startswith("not_found: ") for m in messages), messages
    # A foreign todo reads exactly like one that does not exist.
    assert messages[0].replace(foreign.id, "ID") == messages[4].replace("td_0000", "ID")


def test_wrong_state_and_stale_fences_are_conflicts(url, tenancy):
    todo = execute(store.create(tenancy.agent, queue="default", title="contested")).todo

    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            unclaimed = await tool_error(s, "complete", {"id": todo.id})
            claimed = await s.call_tool("claim", {"id": todo.id, "require_fence": True})
            token = claimed.structured_content["lease_token"]
            missing = await tool_error(s, "heartbeat", {"id": todo.id})
            wrong = await tool_error(s, "heartbeat", {"id": todo.id, "lease_token": token[::-1]})
            again = await tool_error(s, "claim", {"id": todo.id})
            released = await s.call_tool("release", {"id": todo.id, "lease_token": token, "summary": "giving up"})
            after = await tool_error(s, "release", {"id": todo.id, "lease_token": token})
            return unclaimed, missing, wrong, again, released, after

    unclaimed, missing, wrong, again, released, after = run(scenario())
    for message in (unclaimed, missing, wrong, again, after):
        assert message.startswith("conflict: "), message
    assert released.is_error is False and released.structured_content["todo"]["state"] == "pending"


# --- malformed input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("create_for", {"queue": "default", "title": "x", "priority": "high"}, "invalid: priority: must be an integer"),
        ("create_for", {"queue": "default"}, "invalid: title: is required"),
        ("create_for", {"queue": "default", "title": "x", "colour": "red"}, "invalid: colour: is not a known field"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": 0}, "invalid: max_attempts: must be from"),
        ("claim_next", {"wait_seconds": 31}, "invalid: wait_seconds: must be from 0 to 30"),
        ("claim_batch", {"max": 101}, "invalid: max: must be from 1 to 100"),
        ("heartbeat", {}, "invalid: id: is required"),
        ("complete", {"id": "td_x", "artifact": "javascript:alert(1)"}, "invalid: artifact"),
        ("complete_batch", {"items": [{"id": "td_x", "summary": 5}]}, "invalid: items[0].summary: must be a string"),
        ("set_default_lease", {"default_lease_ttl_seconds": 5}, "invalid: default_lease_ttl_seconds: must be from 60"),
        ("list_todos", {"state": "sleeping"}, "invalid: state: must be one of"),
    ],
)
def test_malformed_arguments_are_invalid_and_name_the_field(url, tenancy, tool, arguments, expected):
    [message] = errors_for(url, tenancy.token, [(tool, arguments)])
    assert message.startswith(expected), message
    assert "javascript" not in message  # a refused value is never echoed


def test_text_that_postgres_cannot_store_is_invalid(url, tenancy):
    """A lone UTF-16 surrogate is legal JSON; the official client will not even send one, so the
    request is written by hand (a sessionless 2026-07-28 request: no handshake needed)."""
    body = (
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_for",'
        '"arguments":{"queue":"default","title":"ok","payload":{"k":["\\ud800"]}},'
        '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    headers = {
        "Authorization": f"Bearer {tenancy.token}",
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "create_for",
    }
    response = httpx.post(url + "/mcp/", content=body, headers=headers, timeout=20)
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid: payload: ")


def test_an_unknown_tool_is_a_protocol_error(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            with pytest.raises(MCPError) as raised:
                await client.session.call_tool("drop_tables", {})
            return raised.value

    error = run(scenario())
    assert error.error.code == -32602 and "drop_tables" in error.error.message


# --- the token, on every request -------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "not-a-board-token", "Bearer"])
def test_a_missing_or_unknown_token_cannot_initialize(url, tenancy, token):
    error = run(refused(url, token))
    assert error.error.message.startswith("unauthorized: ")
    assert error.error.code == -32001


def test_a_refused_request_is_a_401_with_a_bearer_challenge(url, tenancy):
    response = httpx.post(url + "/mcp/", json=INITIALIZE, headers={"Accept": ACCEPT}, timeout=20)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="board"'
    body = response.json()
    assert body["error"]["data"] == {
        "code": "unauthorized",
        "message": "missing bearer token (send Authorization: Bearer <token>)",
    }

    response = httpx.post(
        url + "/mcp/", json=INITIALIZE, headers={"Accept": ACCEPT, "Authorization": "Bearer nope"}, timeout=20
    )
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["message"] == "unauthorized: unknown bearer token"

    # The long GET of server notifications is refused the same way.
    response = httpx.get(
        url + "/mcp/", headers={"Accept": "text/event-stream", "Authorization": "Bearer nope"}, timeout=20
    )
    assert response.status_code == 401


def test_an_expired_token_is_refused(url, tenancy):
    expired = factories.endpoint(tenancy.team, expires_at=datetime.now(UTC) - timedelta(minutes=1))
    assert run(refused(url, expired.token)).error.message == "unauthorized: this endpoint's token has expired"


def test_a_revoked_token_is_refused_as_soon_as_the_revoke_reaches_the_server(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            before = await client.session.call_tool("get_default_lease", {})
            execute(endpoints.revoke(None, tenancy.worker.endpoint.id))

            async def refusal() -> MCPError:
                with pytest.raises(MCPError) as raised:
                    await client.session.call_tool("get_default_lease", {})
                return raised.value

            error = await eventually_async(refusal)
            with pytest.raises(MCPError):
                await client.session.list_tools()
            return before, error

    before, error = run(scenario())
    assert before.is_error is False
    assert error.error.message == "unauthorized: this endpoint has been revoked"


def test_a_rotated_token_stops_working_as_soon_as_the_rotation_reaches_the_server(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            rotated = execute(endpoints.rotate(None, tenancy.worker.endpoint.id))

            async def refusal() -> MCPError:
                with pytest.raises(MCPError) as raised:
                    await client.session.call_tool("get_default_lease", {})
                return raised.value

            error = await eventually_async(refusal)
        async with mcp_client(url, rotated.token) as client:
            fresh = await client.session.call_tool("get_default_lease", {})
        return error, fresh

    error, fresh = run(scenario())
    assert error.error.message == "unauthorized: unknown bearer token"
    assert fresh.is_error is False


def test_a_session_answers_only_the_credential_that_opened_it(url, tenancy):
    other = factories.endpoint(tenancy.team, slug="other-worker")
    with httpx.Client(base_url=url, timeout=20) as http:
        opened = http.post(
            "/mcp/", json=INITIALIZE, headers={"Accept": ACCEPT, "Authorization": f"Bearer {tenancy.token}"}
        )
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        common = {"Accept": ACCEPT, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        assert (
            http.post(
                "/mcp/", json=initialized, headers={**common, "Authorization": f"Bearer {tenancy.token}"}
            ).status_code
            == 202
        )

        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        hijack = http.post("/mcp/", json=listing, headers={**common, "Authorization": f"Bearer {other.token}"})
        assert hijack.status_code == 404
        listen = http.get(
            "/mcp/", headers={**common, "Accept": "text/event-stream", "Authorization": f"Bearer {other.token}"}
        )
        assert listen.status_code == 404
        own = http.post("/mcp/", json=listing, headers={**common, "Authorization": f"Bearer {tenancy.token}"})
        assert own.status_code == 200 and "create_for" in own.text
        closed = http.delete("/mcp/", headers={**common, "Authorization": f"Bearer {tenancy.token}"})
        assert closed.status_code == 200
        gone = http.post("/mcp/", json=listing, headers={**common, "Authorization": f"Bearer {tenancy.token}"})
        assert gone.status_code == 404


# --- the mount ---------------------------------------------------------------------------------


def test_the_endpoint_answers_with_and_without_the_trailing_slash(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token, path="/mcp") as client:
            return await client.session.call_tool("get_default_lease", {})

    assert run(scenario()).is_error is False
    with httpx.Client(base_url=url, timeout=20) as http:
        below = http.post("/mcp/tools", json=INITIALIZE, headers={"Authorization": f"Bearer {tenancy.token}"})
        assert below.status_code == 404 and below.json()["error"]["code"] == "not_found"
        # Only /mcp and /mcp/… are MCP's: the rest of Board is still Django's.
        assert http.get("/api/v1/openapi.json").status_code == 200
        assert http.get("/mcpx").status_code == 404

"""The work cycle over MCP: claim with a fence, heartbeat, fail, claim again, complete; the MCP
session recorded on each attempt; batches; claim_next's long poll, and what stops it."""

from __future__ import annotations

import asyncio
import json
import time

import anyio
import httpx

from tests.mcp.client import mcp_client, run
from todos.core.db import connect, execute
from todos.core.store import agent as store


def attempts_of(todo_id: str) -> list[dict]:
    with connect() as conn:
        return conn.execute(
            "SELECT seq, claimer_session, outcome, disposition, summary FROM todo_attempts "
            "WHERE todo_id = %s ORDER BY seq",
            (todo_id,),
        ).fetchall()


def todo_state(todo_id: str) -> str:
    with connect() as conn:
        return conn.execute("SELECT state FROM todos WHERE id = %s", (todo_id,)).fetchone()["state"]


def open_retry_window(todo_id: str) -> None:
    """Test setup: the failed todo's backoff has passed."""
    with connect() as conn:
        conn.execute("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo_id,))


async def ok(session, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content[0].text}"
    # The text rendering is the same JSON as the structured content.
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def test_claim_heartbeat_fail_claim_complete_with_the_fence(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            created = await ok(s, "create_for", {"queue": "default", "title": "fix the build", "max_attempts": 3})
            todo_id = created["todo"]["id"]
            assert created["created"] is True

            first = await ok(s, "claim_next", {"require_fence": True, "claimant": "agent-1", "lease_ttl_seconds": 120})
            assert first["empty"] is False and first["todo"]["id"] == todo_id
            assert first["todo"]["state"] == "claimed" and first["prior_attempts"] == []
            token_1 = first["lease_token"]

            beat = await ok(s, "heartbeat", {"id": todo_id, "lease_token": token_1, "lease_ttl_seconds": 300})
            assert beat["todo"]["lease_expires_at"] > first["todo"]["lease_expires_at"]

            failed = await ok(
                s,
                "fail",
                {"id": todo_id, "lease_token": token_1, "summary": "tests red on py3.11", "result": {"exit": 1}},
            )
            assert failed["todo"]["state"] == "failed"
            assert failed["todo"]["next_retry_at"] is not None and failed["todo"]["dead_letter"] is False

            open_retry_window(todo_id)
            second = await ok(s, "claim", {"id": todo_id, "require_fence": True, "claimant": "agent-1"})
            token_2 = second["lease_token"]
            assert token_2 != token_1
            assert second["attempt_seq"] == 2 and second["todo"]["attempt"] == 2
            [prior] = second["prior_attempts"]
            assert prior["summary"] == "tests red on py3.11" and prior["outcome"] == "failed"

            # The first attempt's token is stale now: the fence refuses it.
            stale = await s.call_tool("heartbeat", {"id": todo_id, "lease_token": token_1})
            assert stale.is_error and stale.content[0].text.startswith("conflict: ")

            done = await ok(
                s,
                "complete",
                {"id": todo_id, "lease_token": token_2, "summary": "pinned the toolchain", "result": {"ok": True}},
            )
            assert done["todo"]["state"] == "done"

            detail = await ok(s, "get_todo", {"id": todo_id})
            return todo_id, client.session_id, detail

    todo_id, session_id, detail = run(scenario())
    assert detail["todo"]["result"] == {"ok": True}
    assert [a["outcome"] for a in detail["attempts"]] == ["completed", "failed"]
    assert "claimer_session" not in json.dumps(detail)

    rows = attempts_of(todo_id)
    assert [(r["seq"], r["outcome"], r["summary"]) for r in rows] == [
        (1, "failed", "tests red on py3.11"),
        (2, "completed", "pinned the toolchain"),
    ]
    # The MCP session id is recorded on each attempt the session claimed.
    assert session_id and {r["claimer_session"] for r in rows} == {session_id}


def test_two_sessions_on_one_credential_are_told_apart(url, tenancy):
    for n in range(2):
        execute(store.create(tenancy.agent, queue="default", title=f"job {n}"))

    async def claim_in_a_session():
        async with mcp_client(url, tenancy.token) as client:
            claimed = await ok(client.session, "claim_next", {"require_fence": True})
            return claimed["todo"]["id"], client.session_id

    async def scenario():
        return await asyncio.gather(claim_in_a_session(), claim_in_a_session())

    (todo_a, session_a), (todo_b, session_b) = run(scenario())
    assert todo_a != todo_b and session_a != session_b
    assert attempts_of(todo_a)[0]["claimer_session"] == session_a
    assert attempts_of(todo_b)[0]["claimer_session"] == session_b


def test_claim_next_long_polls_until_work_arrives(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            empty = await ok(client.session, "claim_next", {"queue": "default"})
            assert empty == {"empty": True}

            async def produce():
                await asyncio.sleep(1.0)
                execute(store.create(tenancy.agent, queue="default", title="late work"))

            started = time.monotonic()
            producer = asyncio.create_task(produce())
            claimed = await ok(client.session, "claim_next", {"queue": "default", "wait_seconds": 20})
            await producer
            return claimed, time.monotonic() - started

    claimed, elapsed = run(scenario())
    assert claimed["empty"] is False and claimed["todo"]["title"] == "late work"
    assert 0.9 < elapsed < 10


def test_a_long_poll_that_finds_nothing_answers_empty(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            started = time.monotonic()
            result = await ok(client.session, "claim_next", {"wait_seconds": 1.5})
            return result, time.monotonic() - started

    result, elapsed = run(scenario())
    assert result == {"empty": True}
    assert 1.4 < elapsed < 8


def test_batches_over_mcp(url, tenancy):
    for n in range(3):
        execute(store.create(tenancy.agent, queue="other", title=f"small {n}"))

    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            batch = await ok(client.session, "claim_batch", {"queue": "other", "max": 5, "require_fence": True})
            items = [{"id": c["todo"]["id"], "lease_token": c["lease_token"], "summary": "ok"} for c in batch["todos"]]
            items.append({"id": "td_missing"})
            return batch, await ok(client.session, "complete_batch", {"items": items})

    batch, completed = run(scenario())
    assert len(batch["todos"]) == 3
    results = completed["results"]
    assert [r["ok"] for r in results] == [True, True, True, False]
    assert results[-1]["error"]["code"] == "not_found"


def test_sessionless_clients_are_served_without_a_session(url, tenancy):
    """A 2026-07-28 client sends self-contained requests (no initialize, no Mcp-Session-Id): the
    same auth and verbs apply, and its claims record no session."""
    execute(store.create(tenancy.agent, queue="default", title="for a stateless client"))
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "claim_next", "arguments": {}, "_meta": envelope},
    }
    headers = {
        "Authorization": f"Bearer {tenancy.token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "claim_next",
        "Accept": "application/json, text/event-stream",
    }
    response = httpx.post(url + "/mcp/", json=body, headers=headers, timeout=20)
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["isError"] is False and result["structuredContent"]["empty"] is False
    todo_id = result["structuredContent"]["todo"]["id"]
    assert attempts_of(todo_id)[0]["claimer_session"] is None

    response = httpx.post(url + "/mcp/", json=body, headers={**headers, "Authorization": "Bearer nope"}, timeout=20)
    assert response.status_code == 401


def test_a_long_poll_whose_client_hangs_up_claims_nothing(url, tenancy):
    """The client drops the connection mid-poll: work that arrives afterwards stays pending
    instead of being leased to nobody."""
    accept = "application/json, text/event-stream"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }

    async def scenario():
        auth = {"Authorization": f"Bearer {tenancy.token}", "Accept": accept}
        async with httpx.AsyncClient(base_url=url, headers=auth, timeout=20) as http:
            opened = await http.post("/mcp/", json=initialize)
            common = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            await http.post("/mcp/", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=common)
            poll = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "claim_next", "arguments": {"wait_seconds": 20}},
            }
            async with http.stream("POST", "/mcp/", json=poll, headers=common) as response:
                assert response.status_code == 200
                await asyncio.sleep(1.0)
            # the stream is closed unread: the connection is gone
        todo = execute(store.create(tenancy.agent, queue="default", title="after the hang-up")).todo
        await asyncio.sleep(2.0)
        return todo.id

    todo_id = run(scenario())
    assert todo_state(todo_id) == "pending"


def test_a_long_poll_the_client_cancels_claims_nothing(url, tenancy):
    """The client gives up on the call (anyio cancellation sends notifications/cancelled): the
    server stops the poll, so work that arrives afterwards stays pending."""

    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            with anyio.move_on_after(1.0):
                await client.session.call_tool("claim_next", {"wait_seconds": 20})
                raise AssertionError("the poll answered")
            await asyncio.sleep(1.0)  # the cancel is a notification of its own: let it land
            todo = execute(store.create(tenancy.agent, queue="default", title="after the cancel")).todo
            await asyncio.sleep(2.0)
            still = await ok(client.session, "get_todo", {"id": todo.id})
            return still["todo"]["state"]

    assert run(scenario()) == "pending"

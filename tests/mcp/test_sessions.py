"""MCP sessions in PostgreSQL, in-process: the record written at ``initialize``, the expiry sweep,
what the runtime's maintenance does with the streams it holds, and the failure paths (a record
that cannot be written or read) that the live server cannot reach on demand."""

from __future__ import annotations

import asyncio
import logging

import httpx
import psycopg
import pytest

from tests import factories
from tests.mcp.client import hold_stream, run
from todos.agents.mcp import asgi, manager, runtime, server
from todos.core.db import connect, execute
from todos.core.store import mcp_sessions as sessions
from todos.core.store.endpoints import token_hash

VERSION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "unit", "version": "7"},
    },
}
LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def client(app, token: str) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver", headers=headers)


async def initialize(http: httpx.AsyncClient) -> httpx.Response:
    return await http.post("/mcp/", json=INITIALIZE)


def rows() -> dict[str, dict]:
    with connect() as conn:
        return {row["id"]: row for row in conn.execute("SELECT * FROM mcp_sessions").fetchall()}


def age(session_id: str, minutes: int) -> None:
    with connect() as conn:
        conn.execute(
            "UPDATE mcp_sessions SET last_seen_at = now() - make_interval(mins => %s) WHERE id = %s",
            (minutes, session_id),
        )


def test_initialize_records_the_session_before_answering(tenancy):
    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            opened = await initialize(http)
            return opened.headers["mcp-session-id"], rows()

    session_id, recorded = run(scenario())
    row = recorded[session_id]
    assert str(row["endpoint_id"]) == str(tenancy.worker.endpoint.id)
    assert bytes(row["token_digest"]) == token_hash(tenancy.token)
    assert row["protocol_version"] == VERSION
    assert row["client_params"]["clientInfo"] == {"name": "unit", "version": "7"}
    assert row["client_params"]["capabilities"] == {"roots": {}}


# A database that cannot answer is "unavailable" (retry); anything else is "internal" (a bug).
FAILURES = {
    "unavailable": (psycopg.OperationalError("connection to db.internal lost"), 503, "unavailable: "),
    "internal": (
        psycopg.errors.UndefinedColumn("column db.internal does not exist"),
        500,
        "internal: internal error (request id ",
    ),
}


@pytest.mark.parametrize("failure", FAILURES, ids=FAILURES.keys())
def test_a_session_that_cannot_be_recorded_is_not_handed_out(monkeypatch, tenancy, caplog, failure):
    exc, _, message = FAILURES[failure]

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(server.sessions, "record", broken)

    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            return await initialize(http)

    with caplog.at_level(logging.WARNING, logger="todos.agents.mcp"):
        opened = run(scenario())
    assert '"error"' in opened.text and message in opened.text
    assert '"result"' not in opened.text and "db.internal" not in opened.text
    assert "db.internal" in caplog.text
    assert rows() == {}


@pytest.mark.parametrize("failure", FAILURES, ids=FAILURES.keys())
def test_a_session_whose_record_cannot_be_read_is_a_json_error(monkeypatch, tenancy, caplog, failure):
    exc, status, message = FAILURES[failure]

    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            session_id = (await initialize(http)).headers["mcp-session-id"]

            async def broken(stmt):
                raise exc

            monkeypatch.setattr(runtime, "aexecute", broken)
            return await http.post(
                "/mcp/", json=LISTING, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
            )

    with caplog.at_level(logging.WARNING, logger="todos.agents.mcp"):
        response = run(scenario())
    assert response.status_code == status
    error = response.json()["error"]
    assert error["message"].startswith(message) and "db.internal" not in response.text
    assert (response.headers.get("retry-after") is not None) == (status == 503)
    assert "db.internal" in caplog.text


def test_the_sweep_deletes_only_sessions_idle_past_the_timeout(tenancy):
    other = factories.endpoint(tenancy.team, slug="second-worker")

    async def scenario():
        ids = []
        for token in (tenancy.token, tenancy.token, other.token):
            async with client(asgi.McpApp(), token) as http:
                ids.append((await initialize(http)).headers["mcp-session-id"])
        return ids

    fresh, idle, idle_elsewhere = run(scenario())
    age(idle, 31)
    age(idle_elsewhere, 45)
    assert execute(sessions.sweep(runtime.SESSION_IDLE_SECONDS)) == 2
    assert set(rows()) == {fresh}
    assert execute(sessions.sweep(runtime.SESSION_IDLE_SECONDS)) == 0


def test_maintenance_keeps_open_streams_alive_drops_sessions_ended_elsewhere_and_sweeps(tenancy):
    """A session whose notification stream this process holds is stamped (an open stream is
    activity, so it is never swept); sessions whose record is gone (their DELETE reached another
    process) are dropped here, streaming or not, their streams closed; expired records are swept."""

    async def scenario():
        app = asgi.McpApp()
        async with client(app, tenancy.token) as http:
            streamed, ended, ended_quietly, idle = [
                (await initialize(http)).headers["mcp-session-id"] for _ in range(4)
            ]
            headers = {
                "Authorization": f"Bearer {tenancy.token}",
                "Accept": "text/event-stream",
                "MCP-Protocol-Version": VERSION,
            }
            kept = hold_stream(app, {**headers, "Mcp-Session-Id": streamed})
            closing = hold_stream(app, {**headers, "Mcp-Session-Id": ended})
            current = runtime.runtime()
            for _ in range(200):
                if {streamed, ended} <= set(current.streams) and kept.sent and closing.sent:
                    break
                await asyncio.sleep(0.01)
            age(streamed, 29)
            age(idle, 31)
            with connect() as conn:
                conn.execute("DELETE FROM mcp_sessions WHERE id = ANY(%s)", ([ended, ended_quietly],))
            held_before = all(current.manager.holds(s) for s in (streamed, ended, ended_quietly, idle))
            swept = await current.maintain()
            await asyncio.wait_for(closing.task, 5)  # its stream closed: the session was dropped here
            dropped = held_before and not current.manager.holds(ended) and not current.manager.holds(ended_quietly)
            dropped = dropped and not current.manager.holds(idle)
            still = current.manager.holds(streamed) and not kept.task.done()
            left = rows()
            await kept.hang_up()
            return swept, dropped, still, left, streamed

    swept, dropped, still, left, streamed = run(scenario())
    assert swept == 1 and dropped and still
    assert set(left) == {streamed}
    with connect() as conn:
        fresh = conn.execute(
            "SELECT last_seen_at > now() - interval '1 minute' AS fresh FROM mcp_sessions WHERE id = %s", (streamed,)
        ).fetchone()["fresh"]
    assert fresh


def test_a_request_stamps_last_seen_at_most_once_a_minute(tenancy):
    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            session_id = (await initialize(http)).headers["mcp-session-id"]
            common = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
            before = rows()[session_id]["last_seen_at"]
            await http.post("/mcp/", json=LISTING, headers=common)
            unchanged = rows()[session_id]["last_seen_at"] == before
            age(session_id, 5)
            aged = rows()[session_id]["last_seen_at"]
            listed = await http.post("/mcp/", json=LISTING, headers=common)
            return unchanged, aged, rows()[session_id]["last_seen_at"], listed.status_code

    unchanged, aged, after, status = run(scenario())
    assert unchanged and status == 200
    assert after > aged


def test_initialize_repeated_on_a_session_updates_its_record(tenancy):
    again = {**INITIALIZE, "id": 3, "params": {**INITIALIZE["params"], "clientInfo": {"name": "unit", "version": "8"}}}

    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            session_id = (await initialize(http)).headers["mcp-session-id"]
            repeated = await http.post(
                "/mcp/", json=again, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
            )
            return session_id, repeated, rows()

    session_id, repeated, recorded = run(scenario())
    assert repeated.status_code == 200 and '"result"' in repeated.text and '"error"' not in repeated.text
    assert recorded[session_id]["client_params"]["clientInfo"]["version"] == "8"


def test_a_session_this_process_does_not_hold_is_restored_from_its_record(tenancy):
    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            session_id = (await initialize(http)).headers["mcp-session-id"]
            current = runtime.runtime()
            await current.manager.drop(session_id)  # as if another process had opened it
            forgotten = not current.manager.holds(session_id)
            common = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
            listed = await http.post("/mcp/", json=LISTING, headers=common)
            connection = manager.connection_of(session_id)
            return forgotten, listed, current.manager.holds(session_id), connection

    forgotten, listed, held, connection = run(scenario())
    assert forgotten and held
    assert listed.status_code == 200 and "claim_next" in listed.text
    # Restored as it was negotiated: version, client, and past the handshake.
    assert connection.protocol_version == VERSION
    assert connection.client_params.client_info.name == "unit" and connection.initialized.is_set()


def test_a_restore_that_fails_is_a_json_500(monkeypatch, tenancy, caplog):
    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            session_id = (await initialize(http)).headers["mcp-session-id"]
            current = runtime.runtime()
            await current.manager.drop(session_id)

            async def broken(found, user):
                raise RuntimeError("task group gone: secret detail")

            monkeypatch.setattr(current.manager, "restore", broken)
            return await http.post(
                "/mcp/", json=LISTING, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
            )

    with caplog.at_level(logging.ERROR, logger="todos.agents.mcp"):
        response = run(scenario())
    assert response.status_code == 500
    assert response.json()["error"]["message"].startswith("internal: internal error (request id ")
    assert "secret" not in response.text and "secret detail" in caplog.text


def test_a_process_at_its_session_limit_refuses_to_restore_with_503(tenancy):
    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            kept = (await initialize(http)).headers["mcp-session-id"]
            elsewhere = (await initialize(http)).headers["mcp-session-id"]
            current = runtime.runtime()
            await current.manager.drop(elsewhere)
            current.manager.max_sessions = 1  # this process holds one session: it is full
            common = {"MCP-Protocol-Version": VERSION}
            refused = await http.post("/mcp/", json=LISTING, headers={**common, "Mcp-Session-Id": elsewhere})
            served = await http.post("/mcp/", json=LISTING, headers={**common, "Mcp-Session-Id": kept})
            return refused, served.status_code, current.manager.holds(elsewhere)

    refused, served, held = run(scenario())
    assert refused.status_code == 503 and not held
    assert refused.json()["error"]["message"].startswith("unavailable: too many open MCP sessions")
    assert served == 200


def test_initialize_params_too_large_to_keep_are_refused_and_nothing_is_recorded(tenancy):
    bulky = {
        **INITIALIZE,
        "params": {**INITIALIZE["params"], "capabilities": {"experimental": {"x": {"pad": "p" * 70_000}}}},
    }

    async def scenario():
        async with client(asgi.McpApp(), tenancy.token) as http:
            return await http.post("/mcp/", json=bulky)

    opened = run(scenario())
    assert f"invalid: initialize params over {server.CLIENT_PARAMS_MAX_BYTES} bytes" in opened.text
    assert '"result"' not in opened.text
    assert rows() == {}

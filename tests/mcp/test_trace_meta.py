"""Trace context over MCP (docs/telemetry.md): a tool call's ``_meta.traceparent`` is the call's
context, as the HTTP transport's ``traceparent`` header is: kept by the verbs that keep one, and a
malformed one is refused naming ``_meta.traceparent``, nothing written."""

from __future__ import annotations

from tests.mcp.client import mcp_client, run
from tests.mcp.test_cycle import ok as mcp_ok
from todos.core.db import connect

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"


def todo_count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def test_a_calls_meta_traceparent_is_kept_by_create_for_and_complete(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            made = await s.call_tool("create_for", {"queue": "default", "title": "t"}, meta={"traceparent": PRODUCER})
            assert not made.is_error, made.content
            todo_id = made.structured_content["todo"]["id"]
            assert made.structured_content["todo"]["traceparent"] == PRODUCER
            await mcp_ok(s, "claim", {"id": todo_id})
            done = await s.call_tool("complete", {"id": todo_id}, meta={"traceparent": WORKER})
            assert not done.is_error, done.content
            detail = await mcp_ok(s, "get_todo", {"id": todo_id})
            assert detail["attempts"][0]["traceparent"] == WORKER

    run(scenario())


def test_a_malformed_meta_traceparent_is_refused_naming_it_and_nothing_is_written(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            refused = await client.session.call_tool(
                "create_for", {"queue": "default", "title": "t"}, meta={"traceparent": "00-not-a-context"}
            )
            assert refused.is_error and refused.content[0].text.startswith("invalid: _meta.traceparent")

    run(scenario())
    assert todo_count() == 0

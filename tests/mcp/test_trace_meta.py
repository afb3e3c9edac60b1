"""Trace context over MCP (docs/telemetry.md): a tool call's ``_meta.traceparent`` is the call's
context, as the HTTP transport's ``traceparent`` header is: kept by the verbs that keep one, and a
malformed one is refused naming ``_meta.traceparent``, nothing written.

The requests are raw sessionless ones: the SDK's client injects its own current span's context
into ``_meta`` whenever OpenTelemetry has a provider, which would replace the one sent here."""

from __future__ import annotations

import httpx
import pytest

from todos.core.db import connect

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"
HEADER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def todo_count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def tool(url: str, token: str, name: str, arguments: dict, meta: dict, header: str | None = None) -> dict:
    """One sessionless ``tools/call`` with ``meta`` in its ``_meta``; its result."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        **meta,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": envelope},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "Accept": "application/json, text/event-stream",
        **({"traceparent": header} if header else {}),
    }
    response = httpx.post(url + "/mcp/", json=body, headers=headers, timeout=20)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_a_calls_meta_traceparent_is_kept_by_create_for_and_complete_over_the_header(url, tenancy):
    made = tool(url, tenancy.token, "create_for", {"queue": "default", "title": "t"}, {"traceparent": PRODUCER}, HEADER)
    assert made["isError"] is False, made
    todo = made["structuredContent"]["todo"]
    assert todo["traceparent"] == PRODUCER
    assert tool(url, tenancy.token, "claim", {"id": todo["id"]}, {})["isError"] is False
    done = tool(url, tenancy.token, "complete", {"id": todo["id"]}, {"traceparent": WORKER})
    assert done["isError"] is False, done
    detail = tool(url, tenancy.token, "get_todo", {"id": todo["id"]}, {})["structuredContent"]
    assert detail["attempts"][0]["traceparent"] == WORKER


def test_without_meta_the_header_applies(url, tenancy):
    made = tool(url, tenancy.token, "create_for", {"queue": "default", "title": "t"}, {}, HEADER)
    assert made["structuredContent"]["todo"]["traceparent"] == HEADER


@pytest.mark.parametrize("bad", ["00-not-a-context", 42, ["00"]])
def test_a_malformed_meta_traceparent_is_refused_naming_it_and_nothing_is_written(url, tenancy, bad):
    refused = tool(url, tenancy.token, "create_for", {"queue": "default", "title": "t"}, {"traceparent": bad})
    assert refused["isError"] is True and refused["content"][0]["text"].startswith("invalid: _meta.traceparent")
    assert todo_count() == 0

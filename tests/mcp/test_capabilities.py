"""Required capabilities over MCP: the tools take ``requires`` and ``capabilities`` as
the HTTP verbs do, say so in their descriptions, and refuse bad labels naming the field."""

from __future__ import annotations

from tests.mcp.client import mcp_client, run
from tests.mcp.test_errors import errors_for
from todos.core.db import pool


def test_tools_create_and_claim_capability_bound_work(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            made = await s.call_tool("create_for", {"queue": "default", "title": "render", "requires": ["gpu"]})
            empty = await s.call_tool("claim_next", {})
            took = await s.call_tool("claim_next", {"capabilities": ["gpu"]})
            tools = {t.name: t for t in (await s.list_tools()).tools}
            return made.structured_content, empty.structured_content, took.structured_content, tools, s.instructions

    made, empty, took, tools, _ = run(scenario())
    assert made["todo"]["requires"] == ["gpu"]
    assert empty == {"empty": True}
    assert took["todo"]["id"] == made["todo"]["id"] and took["todo"]["requires"] == ["gpu"]
    assert "requires" in tools["create_for"].description
    for name in ("claim_next", "claim", "claim_batch"):
        assert "capabilities" in tools[name].description, name
        assert tools[name].input_schema["properties"]["capabilities"]["maxItems"] == 16


def test_the_instructions_explain_capabilities(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            return client.session.instructions

    instructions = run(scenario())
    assert "capabilities" in instructions and "default capabilities" in instructions


def test_bad_labels_are_tool_errors_naming_the_field(url, tenancy):
    too_many = [f"l{n}" for n in range(17)]
    messages = errors_for(
        url,
        tenancy.token,
        [
            ("create_for", {"queue": "default", "title": "t", "requires": too_many}),
            ("create_for", {"queue": "default", "title": "t", "requires": [""]}),
            ("claim_next", {"capabilities": ["x" * 65]}),
            ("claim_batch", {"max": 1, "capabilities": [1]}),
        ],
    )
    assert messages[0].startswith("invalid: requires: must list at most 16 items")
    assert messages[1].startswith("invalid: requires[0]: ")
    assert messages[2].startswith("invalid: capabilities[0]: ") and "64" in messages[2]
    assert messages[3].startswith("invalid: capabilities[0]: must be a string")
    with pool().connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"] == 0

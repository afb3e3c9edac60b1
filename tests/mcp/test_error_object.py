"""The error object over MCP: the fail and complete tools take it (their input schema is the
verb table's), and get_todo answers it on each attempt."""

from __future__ import annotations

from tests.mcp.client import mcp_client, run
from tests.mcp.test_cycle import ok as mcp_ok

ERROR = {"type": "builtins.KeyError", "message": "'user'", "traceback": "Traceback …\nKeyError: 'user'"}


def test_mcp_fail_and_get_todo_carry_the_error(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            tools = {tool.name: tool for tool in (await s.list_tools()).tools}
            for name in ("fail", "complete"):
                assert set(tools[name].input_schema["properties"]["error"]["properties"]) == {
                    "type",
                    "message",
                    "traceback",
                }
            created = await mcp_ok(s, "create_for", {"queue": "default", "title": "via mcp"})
            todo_id = created["todo"]["id"]
            await mcp_ok(s, "claim", {"id": todo_id})
            await mcp_ok(s, "fail", {"id": todo_id, "error": ERROR})
            detail = await mcp_ok(s, "get_todo", {"id": todo_id})
            assert detail["attempts"][0]["error"] == {**ERROR, "truncated": False}
            refused = await s.call_tool("fail", {"id": todo_id, "error": {"type": 1}})
            assert refused.is_error and "error.type" in refused.content[0].text

    run(scenario())

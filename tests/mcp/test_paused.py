"""A paused endpoint over MCP: a claim tool answers an error starting ``paused:``; a report lands."""

from __future__ import annotations

from tests import factories
from tests.mcp.client import mcp_client, run
from tests.mcp.test_errors import tool_error
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store


def test_claims_over_mcp_say_paused_and_reports_land(url, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="held")).todo
    execute(agent_store.claim(tenancy.agent, todo.id))
    admin = factories.member(tenancy.team, factories.user("adam"), "admin")
    execute(endpoint_store.pause_claims(admin, tenancy.agent.endpoint_id))

    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            refused = [
                await tool_error(client.session, "claim_next", {}),
                await tool_error(client.session, "claim_batch", {"max": 2}),
            ]
            done = await client.session.call_tool("complete", {"id": todo.id})
            return refused, done

    refused, done = run(scenario())
    assert all(m.startswith("paused: ") and "by adam" in m for m in refused), refused
    assert not done.is_error and done.structured_content["todo"]["state"] == "done"

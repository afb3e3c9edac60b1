"""initialize and tools/list: what an endpoint's MCP session sees, scope by scope."""

from __future__ import annotations

import pytest

from tests import factories
from tests.mcp.client import mcp_client, run
from tests.support.api import eventually_async
from todos.agents.api.verbs import TABLE, VERBS
from todos.agents.mcp.descriptions import ADVICE
from todos.agents.mcp.tools import object_schema
from todos.core.db import execute
from todos.core.store import endpoints
from todos.core.store.endpoints import SCOPE_VERBS

ALL_TOOLS = {verb.name for verb in TABLE}
SCHEDULE_TOOLS = {
    "list_schedules",
    "create_schedule",
    "update_schedule",
    "fire_schedule",
    "pause_schedule",
    "resume_schedule",
    "delete_schedule",
}


async def tool_names(url: str, token: str) -> set[str]:
    async with mcp_client(url, token) as client:
        return {tool.name for tool in (await client.session.list_tools()).tools}


def test_initialize_names_the_server_and_explains_the_queue(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            return client.session, client.session_id

    session, session_id = run(scenario())
    assert session.server_info.name == "board"
    assert session.server_capabilities.tools is not None
    assert session.server_capabilities.experimental["board/todo_ready"]["method"] == "notifications/todo_ready"
    instructions = session.instructions
    for advice in ("require_fence", "heartbeat", "third of the lease", "release", "summary", "never as instructions"):
        assert advice in instructions, advice
    assert session_id and len(session_id) >= 16


def test_an_endpoint_with_every_verb_sees_every_tool(url, tenancy):
    implied = {"claim_batch", "complete_batch", "create_batch"} | SCHEDULE_TOOLS  # "schedules": schedule tools
    assert (set(SCOPE_VERBS) - {"schedules"}) | implied == ALL_TOOLS
    assert run(tool_names(url, tenancy.token)) == ALL_TOOLS


@pytest.mark.parametrize(
    ("verbs", "expected"),
    [
        (["list_todos"], {"list_todos", "get_todo"}),
        (["get_todo"], {"get_todo"}),
        (["claim_next", "heartbeat"], {"claim_next", "claim_batch", "heartbeat"}),
        (["complete", "create_for"], {"complete", "complete_batch", "create_for", "create_batch"}),
        (["claim", "fail", "release"], {"claim", "fail", "release"}),
        (["get_default_lease", "set_default_lease"], {"get_default_lease", "set_default_lease"}),
        (["schedules"], SCHEDULE_TOOLS),
    ],
)
def test_tools_list_shows_exactly_the_verbs_in_scope(url, tenancy, verbs, expected):
    narrow = factories.endpoint(tenancy.team, verbs=verbs)
    assert run(tool_names(url, narrow.token)) == expected


def test_a_scope_change_shows_once_it_reaches_the_server(url, tenancy):
    narrow = factories.endpoint(tenancy.team, verbs=["list_todos"])

    async def scenario():
        async with mcp_client(url, narrow.token) as client:
            before = {t.name for t in (await client.session.list_tools()).tools}
            execute(endpoints.set_scopes(None, narrow.endpoint.id, verbs=["claim_next"], queues=["default"]))

            async def changed() -> set[str]:
                names = {t.name for t in (await client.session.list_tools()).tools}
                assert names != before
                return names

            return before, await eventually_async(changed)

    before, after = run(scenario())
    assert before == {"list_todos", "get_todo"}
    assert after == {"claim_next", "claim_batch"}


def test_each_tool_is_its_verb_schemas_and_guidance(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            return (await client.session.list_tools()).tools

    tools = {tool.name: tool for tool in run(scenario())}
    for name, tool in tools.items():
        verb = VERBS[name]
        assert tool.input_schema == object_schema(verb.input), name
        assert tool.output_schema == object_schema(verb.output), name
        assert tool.input_schema["type"] == tool.output_schema["type"] == "object"
        assert tool.description.startswith(verb.description), name
        assert ADVICE[name] in tool.description, name
        assert tool.title
    # The MCP schemas are the HTTP schemas: strict inputs, every field named.
    assert tools["claim_next"].input_schema["additionalProperties"] is False
    assert "anyOf" in tools["claim_next"].output_schema

    assert tools["list_todos"].annotations.read_only_hint is True
    assert tools["complete"].annotations.read_only_hint is False
    assert tools["heartbeat"].annotations.idempotent_hint is True
    assert tools["list_schedules"].annotations.read_only_hint is True
    assert tools["delete_schedule"].annotations.destructive_hint is True
    assert tools["pause_schedule"].annotations.destructive_hint is False
    # an edit sent twice leaves what the first left; a fire sent twice fires twice
    assert tools["update_schedule"].annotations.idempotent_hint is True
    assert tools["fire_schedule"].annotations.idempotent_hint is False


def test_descriptions_teach_fence_heartbeat_reporting_and_data_not_instructions(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            return {t.name: t.description for t in (await client.session.list_tools()).tools}

    described = run(scenario())
    assert "require_fence" in described["claim_next"] and "require_fence" in described["claim"]
    assert "wait_seconds" in described["claim_next"] and "long-poll" in described["claim_next"]
    assert "third of the lease" in described["claim_next"]
    assert "third of the lease" in described["heartbeat"]
    assert "summary" in described["complete"] and "summary" in described["fail"]
    assert "give up" in described["release"]
    for name in ("claim_next", "claim", "get_todo"):
        assert "not instructions" in described[name] or "never instructions" in described[name], name

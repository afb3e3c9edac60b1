"""The verb table seen as MCP tools, and verb outcomes seen as ``CallToolResult``.

Nothing here decides anything about a verb: the tool's name, input schema and output schema are
the verb table's (``todos.agents.api.verbs``), and which tools an endpoint sees follows the same
``granted_by`` rule that ``verbs.run`` enforces (``list_todos`` grants ``get_todo``,
``claim_next`` grants ``claim_batch``, ``complete`` grants ``complete_batch``). Listing only the
granted tools is a courtesy to the agent; the check that counts runs again on every call.

Results carry the verb's JSON output twice, as MCP asks: as ``structuredContent`` (checked by
clients against the tool's ``outputSchema``) and as JSON text in ``content`` for clients that
only read text. Failures are tool errors (``isError: true``) whose text starts with the agent
API's error code, ``"<code>: <message>"``, so a model reads ``conflict: …`` exactly as an HTTP
client reads ``{"error": {"code": "conflict"}}``.
"""

from __future__ import annotations

import json
from functools import cache

import mcp_types as types

from todos.agents.api.verbs import TABLE, Verb
from todos.agents.mcp.descriptions import describe
from todos.core.selectors.agent_api import Credential

TITLES = {
    "create_for": "Create a todo",
    "list_todos": "List todos",
    "get_todo": "Get a todo and its attempts",
    "claim_next": "Claim the next todo",
    "claim": "Claim a todo by id",
    "heartbeat": "Extend a lease",
    "complete": "Complete a todo",
    "fail": "Report a failed attempt",
    "release": "Release a lease",
    "claim_batch": "Claim several todos",
    "complete_batch": "Complete several todos",
    "create_batch": "Create several todos",
    "get_default_lease": "Get the default lease",
    "set_default_lease": "Set the default lease",
    "list_schedules": "List this endpoint's schedules",
    "create_schedule": "Create a periodic schedule",
    "update_schedule": "Edit a schedule",
    "fire_schedule": "Fire a schedule now",
    "pause_schedule": "Pause a schedule",
    "resume_schedule": "Resume a schedule",
    "delete_schedule": "Delete a schedule",
}
READ_ONLY = frozenset({"list_todos", "get_todo", "get_default_lease", "list_schedules"})
# Repeating the call with the same arguments changes nothing more than the first call did.
IDEMPOTENT = READ_ONLY | {"heartbeat", "set_default_lease", "update_schedule", "pause_schedule", "resume_schedule"}
DESTRUCTIVE = frozenset({"delete_schedule"})


def granted(verb: Verb, credential: Credential) -> bool:
    return bool(verb.granted_by.intersection(credential.scope_verbs))


def visible_verbs(credential: Credential) -> list[Verb]:
    """The verbs this endpoint may call, in the verb table's order."""
    return [verb for verb in TABLE if granted(verb, credential)]


def object_schema(schema: dict) -> dict:
    """``schema`` with ``"type": "object"`` at its root, as MCP requires of tool schemas
    (``claim_next``'s output is an ``anyOf`` of two objects and says so only inside)."""
    if schema.get("type") == "object":
        return schema
    return {"type": "object", **schema}


@cache
def tool(name: str) -> types.Tool:
    """The MCP tool of verb ``name`` (built once: the verb table is static)."""
    verb = next(v for v in TABLE if v.name == name)
    return types.Tool(
        name=verb.name,
        title=TITLES.get(verb.name),
        description=describe(verb.name, verb.description),
        input_schema=object_schema(verb.input),
        output_schema=object_schema(verb.output),
        annotations=types.ToolAnnotations(
            title=TITLES.get(verb.name),
            read_only_hint=verb.name in READ_ONLY,
            destructive_hint=verb.name in DESTRUCTIVE,
            idempotent_hint=verb.name in IDEMPOTENT,
            open_world_hint=False,
        ),
    )


def tools_for(credential: Credential) -> list[types.Tool]:
    return [tool(verb.name) for verb in visible_verbs(credential)]


def success(output: dict) -> types.CallToolResult:
    text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=output)


def failure(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{code}: {message}")], is_error=True)

"""The MCP server: ``tools/list`` and ``tools/call`` over the agent API's verb table.

It is the SDK's low-level :class:`mcp.server.Server` with two request handlers and one
notification handler, and it decides nothing the HTTP transport does not: the caller's
credential was looked up for this very HTTP request (``auth.py``), ``tools/list`` shows the verbs
it grants, and ``tools/call`` runs :func:`todos.agents.api.verbs.run` (scope check, schema check,
handler) exactly as ``POST /api/v1/<verb>`` does. A store error becomes a tool error
``"<code>: <message>"``; anything unexpected is logged under a request id and answered
``internal`` with that id only.

The MCP session id (the ``Mcp-Session-Id`` the session manager handed out) goes into the call
as ``Call.session``: the store records it as the attempt's ``claimer_session``, so an operator
can tell apart two sessions that share one credential.

A middleware writes each new session down in PostgreSQL (``todos/core/store/mcp_sessions.py``) while
``initialize`` is answered, before the answer leaves: the session's next request may reach another
process, which re-creates the session from that row (``manager.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from functools import lru_cache

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from todos.agents.api import tracing
from todos.agents.api.asgi import GONE_SCOPE_KEY
from todos.agents.api.errors import internal_message, new_request_id
from todos.agents.api.handlers import Call
from todos.agents.api.verbs import VERBS, run
from todos.agents.mcp import manager, ready, tools
from todos.agents.mcp.auth import CREDENTIAL_KEY, DIGEST_KEY, RPC_INTERNAL, RPC_UNAUTHORIZED, RPC_UNAVAILABLE
from todos.agents.mcp.descriptions import INSTRUCTIONS
from todos.core.db import aexecute
from todos.core.errors import StoreError
from todos.core.selectors.agent_api import Credential
from todos.core.store import mcp_sessions as sessions
from todos.core.unavailable import classify as classify_unavailable
from todos.core.unavailable import describe as describe_unavailable

logger = logging.getLogger("todos.agents.mcp")

SERVER_NAME = "board"
SESSION_HEADER = "mcp-session-id"
# Advertised under the server's ``experimental`` capabilities (the handshake-era place for a
# server's own additions) so a client can tell that Board sends todo_ready.
EXPERIMENTAL = {"board/todo_ready": {"method": ready.METHOD, "params": {"queue": "string"}}}


def _scope(ctx: ServerRequestContext) -> dict:
    return getattr(ctx.request, "scope", None) or {}


def credential_of(ctx: ServerRequestContext) -> Credential:
    credential = _scope(ctx).get(CREDENTIAL_KEY)
    if credential is None:  # only reachable if the server is mounted without auth.py in front
        raise MCPError(code=RPC_UNAUTHORIZED, message="unauthorized: no credential on this request")
    return credential


def session_id_of(ctx: ServerRequestContext) -> str | None:
    """The MCP session this request belongs to; None on the sessionless (2026-07-28) exchange."""
    headers = getattr(ctx.request, "headers", None)
    return headers.get(SESSION_HEADER) if headers is not None else None


def _connection(ctx: ServerRequestContext):
    """The SDK's per-session ``Connection`` (its standalone outbound stream and teardown stack).

    The SDK's own ``Context`` exposes it as ``ctx.connection``, but the runner hands low-level
    handlers a ``ServerRequestContext`` whose session holds it privately (mcp 2.3.0, pinned; the
    balanced and ``todo_ready`` tests break first if that moves).
    """
    return getattr(ctx.session, "_connection", None)


async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    credential = credential_of(ctx)
    return types.ListToolsResult(tools=tools.tools_for(credential))


def traceparent_of(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> tuple[str | None, str]:
    """The call's trace context and where it came from: the request's ``_meta.traceparent`` (the
    context of this one call, as MCP carries it), else the HTTP request's ``traceparent`` header."""
    meta = params.meta if isinstance(params.meta, dict) else {}
    given = meta.get("traceparent")
    if given is not None:
        return (given if isinstance(given, str) else repr(given)[:80]), "_meta.traceparent"
    headers = getattr(ctx.request, "headers", None)
    return (headers.get("traceparent") if headers is not None else None), "traceparent header"


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    credential = credential_of(ctx)
    verb = VERBS.get(params.name)
    if verb is None:
        # MCP: an unknown tool is a protocol error, not a tool result.
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name[:64]!r}")
    traceparent, source = traceparent_of(ctx, params)
    call = Call(
        credential=credential,
        session=session_id_of(ctx),
        gone=_scope(ctx).get(GONE_SCOPE_KEY),
        traceparent=traceparent,
        traceparent_from=source,
    )
    arguments = dict(params.arguments or {})
    with tracing.verb_span(verb.name, "mcp", traceparent) as span:
        return await _call_tool(verb, call, arguments, span)


async def _call_tool(verb, call: Call, arguments: dict, span) -> types.CallToolResult:
    try:
        output = await run(verb, call, arguments)
    except StoreError as exc:
        if exc.code == "internal":
            return _internal(verb.name, exc.message)
        if exc.code == "unavailable":
            logger.warning("database unavailable in MCP call (tools/call %s): %s", verb.name, describe_unavailable(exc))
        return tools.failure(exc.code, exc.message)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - logged with its traceback, answered with an id only
        return _internal(verb.name, None)
    tracing.describe(span, verb.name, arguments, output)
    return tools.success(output)


def _internal(verb: str, detail: str | None) -> types.CallToolResult:
    request_id = new_request_id()
    if detail is None:
        logger.exception("internal error in MCP call %s (tools/call %s)", request_id, verb)
    else:
        logger.error("internal error in MCP call %s (tools/call %s): %s", request_id, verb, detail)
    return tools.failure("internal", internal_message(request_id))


def input_schema(name: str) -> dict | None:
    return tools.tool(name).input_schema if name in VERBS else None


# The initialize params kept for a session (clientInfo, capabilities): more is refused.
CLIENT_PARAMS_MAX_BYTES = 64 * 1024


async def record_session(ctx: ServerRequestContext, call_next):
    """Server middleware: once ``initialize`` has been answered (not yet sent), write the new
    session down so that any process can serve its next request. If that fails, so does
    ``initialize``: a session no other process could find is not handed out."""
    result = await call_next(ctx)
    if ctx.method != "initialize" or ctx.request_id is None:
        return result
    connection = _connection(ctx)
    session_id = getattr(connection, "session_id", None)
    if connection is None or session_id is None:  # the sessionless path records nothing
        return result
    credential = credential_of(ctx)
    digest: bytes = _scope(ctx)[DIGEST_KEY]  # set by the authentication in front of every request
    client_params = types.InitializeRequestParams.model_validate(ctx.params or {}, by_name=False)
    kept = client_params.model_dump(by_alias=True, mode="json", exclude_none=True)
    if len(json.dumps(kept)) > CLIENT_PARAMS_MAX_BYTES:
        raise MCPError(
            code=types.INVALID_PARAMS, message=f"invalid: initialize params over {CLIENT_PARAMS_MAX_BYTES} bytes"
        )
    try:
        await aexecute(sessions.record(session_id, credential.endpoint_id, digest, result["protocolVersion"], kept))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - logged with its traceback, answered with an id only
        unavailable = classify_unavailable(exc)
        if unavailable is not None:
            logger.warning("could not record MCP session %s: %s", session_id[:8], describe_unavailable(exc))
            raise MCPError(
                code=RPC_UNAVAILABLE,
                message=f"unavailable: {unavailable.message}",
                data={"retry_after": unavailable.retry_after},
            ) from None
        request_id = new_request_id()
        logger.exception("internal error recording MCP session %s (request id %s)", session_id[:8], request_id)
        raise MCPError(code=RPC_INTERNAL, message=f"internal: {internal_message(request_id)}") from None
    manager.attach(session_id, connection)
    return result


class BoardServer(Server):
    """The SDK's server, advertising ``notifications/todo_ready`` at ``initialize``.

    The session manager builds each session's initialization options with no arguments, so the
    only place to add an experimental capability is this method.
    """

    def create_initialization_options(self, notification_options=None, experimental_capabilities=None, extensions=None):
        experimental = {**EXPERIMENTAL, **(experimental_capabilities or {})}
        return super().create_initialization_options(notification_options, experimental, extensions)


@lru_cache(maxsize=1)
def build_server() -> Server:
    """The process's MCP server (handlers only; sessions live in ``runtime.py``, one set per loop)."""
    server = BoardServer(
        SERVER_NAME,
        title="Board",
        description="A durable, lease-based work queue: claim todos, keep the lease, report.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # For the 2026-07-28 path's Mcp-Param-* header check: the schema by name, without
        # running tools/list (and its credential) for every call.
        get_tool_input_schema=input_schema,
    )
    server.middleware.append(record_session)
    return server

"""The MCP transport: the agent verbs as MCP tools over streamable HTTP at ``/mcp/``.

HTTP (``todos/agents/api``) and MCP are two doors to one verb table (``todos.agents.api.verbs``): same names,
same input and output schemas, same scope rules, same handlers. This package only adapts:

* ``asgi.py`` – the ``/mcp`` mount in front of Django, and the MCP ASGI app (auth, then the SDK);
* ``auth.py`` – the bearer token, looked up on every HTTP request (401 before the MCP layer);
* ``runtime.py`` – the SDK's session manager, started lazily in the server's event loop, and the
  upkeep of its sessions;
* ``manager.py`` – that manager, able to serve a session another process opened;
* ``todos/core/store/mcp_sessions.py`` – the sessions' records in PostgreSQL (``mcp_sessions``),
  which any process reads;
* ``server.py`` – the SDK ``Server``: ``tools/list`` and ``tools/call`` over the verb table;
* ``tools.py`` – verb → tool (schemas, annotations) and output/error → ``CallToolResult``;
* ``descriptions.py`` – what the tools and the server tell an agent about using the queue well;
* ``ready.py`` – ``notifications/todo_ready`` to live sessions when work arrives;
* ``config.py`` – :func:`client_config`, the client configuration shown when an endpoint is vended.

Importing this package does not import the SDK: :func:`client_config` is cheap for the Board's views.
"""

from todos.agents.mcp.config import client_config, mcp_url

__all__ = ["client_config", "mcp_url"]

"""The ready-to-paste MCP client configuration for an endpoint.

The endpoints screen shows this once, on the vend reveal, next to the curl example: the token is
never stored, so that is the only moment a complete configuration can be printed. The shape is
the ``mcpServers`` block most MCP hosts read (a streamable-HTTP server with a static header).
"""

from __future__ import annotations

MCP_PATH = "/mcp/"
SERVER_KEY = "board"


def mcp_url(base_url: str) -> str:
    """The MCP endpoint under ``base_url`` (``https://board.example.com`` or with a trailing slash)."""
    base = base_url.strip()
    if not base:
        raise ValueError("base_url is required (for example https://board.example.com)")
    return base.rstrip("/") + MCP_PATH


def client_config(base_url: str, token: str, *, name: str = SERVER_KEY) -> dict:
    """``{"mcpServers": {name: {"type": "http", "url": …, "headers": {"Authorization": "Bearer …"}}}}``."""
    token = token.strip()
    if not token:
        raise ValueError("token is required")
    return {
        "mcpServers": {
            name: {
                "type": "http",
                "url": mcp_url(base_url),
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }

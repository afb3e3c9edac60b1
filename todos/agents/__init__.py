"""What agents talk to: one verb table served over two transports, HTTP (``api``) and MCP (``mcp``)."""

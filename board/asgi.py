"""The ASGI application: HTTP through Django, websockets through Channels (see board/routing.py)."""

import os
import threading
from importlib import import_module

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
django_asgi_app = get_asgi_application()

from board.daphne_requests import skip_form_parsing  # noqa: E402
from board.routing import build_application  # noqa: E402  (needs the app registry loaded first)
from todos.live.relay import start_relay  # noqa: E402

# Every Board process stands as a relay candidate (one is elected per installation). Started here
# because daphne has no ASGI lifespan: loading this module is where a server process begins.
start_relay()
skip_form_parsing()

application = build_application(django_asgi_app)

# The MCP SDK takes seconds of CPU to import. The server listens without it; it is imported in the
# background a little later (not at once: the process's first requests would share the CPU with it),
# so the first /mcp/ request finds it loaded instead of stalling the event loop while it imports.
MCP_IMPORT_DELAY_SECONDS = 3.0
_mcp_import = threading.Timer(MCP_IMPORT_DELAY_SECONDS, import_module, args=("todos.agents.mcp.runtime",))
_mcp_import.name = "board-mcp-import"
_mcp_import.daemon = True
_mcp_import.start()

__all__ = ["application", "django_asgi_app"]

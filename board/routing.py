"""Protocol routing: HTTP to Django, websockets to the live Board consumers."""

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator

from todos.live.routing import websocket_urlpatterns as live_urlpatterns

websocket_urlpatterns: list = [*live_urlpatterns]


def _http_app(django_asgi_app):
    from todos.agents.api.asgi import AgentApiGuard
    from todos.agents.api.fast_path import AgentApiFastPath
    from todos.agents.mcp.asgi import mount as mount_mcp

    # /api/v1/<verb>: the verb view straight from ASGI (todos/agents/api/fast_path.py), behind the guard
    # (the body limit before a body is buffered, and client disconnects for long polls).
    # /api/v1/openapi.json: the guard, then Django. /mcp/: the MCP transport (todos/agents/mcp), outside
    # Django. Everything else: Django.
    return mount_mcp(AgentApiFastPath(AgentApiGuard(django_asgi_app)))


def build_application(django_asgi_app) -> ProtocolTypeRouter:
    """The whole ASGI application around Django's (built by ``board/asgi.py`` once the app registry
    is loaded)."""
    return ProtocolTypeRouter(
        {
            "http": _http_app(django_asgi_app),
            "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        }
    )

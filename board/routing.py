"""Protocol routing: HTTP to Django, websockets to the live Board consumers."""

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator

from todos.live.routing import websocket_urlpatterns as live_urlpatterns

websocket_urlpatterns: list = [*live_urlpatterns]


def _http_app():
    from board.asgi import django_asgi_app
    from todos.api.asgi import AgentApiGuard
    from todos.mcp.asgi import mount as mount_mcp

    # /api/v1/: the body limit before Django buffers a body, and client disconnects for long polls.
    # /mcp/: the MCP transport (todos/mcp), outside Django; everything else goes on to Django.
    return mount_mcp(AgentApiGuard(django_asgi_app))


application = ProtocolTypeRouter(
    {
        "http": _http_app(),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

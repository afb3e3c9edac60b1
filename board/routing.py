"""Protocol routing: HTTP to Django, websockets to the live Board consumers."""

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator

websocket_urlpatterns: list = []


def _http_app():
    from board.asgi import django_asgi_app

    return django_asgi_app


application = ProtocolTypeRouter(
    {
        "http": _http_app(),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

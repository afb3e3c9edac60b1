"""The ASGI application: HTTP through Django, websockets through Channels (see board/routing.py)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
django_asgi_app = get_asgi_application()

from board.routing import application  # noqa: E402  (needs the app registry loaded first)

__all__ = ["application", "django_asgi_app"]

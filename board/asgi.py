"""The ASGI application: HTTP through Django, websockets through Channels (see board/routing.py)."""

import os

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

__all__ = ["application", "django_asgi_app"]

"""Board's ASGI application without the agent API fast path: every ``/api/v1/`` call through
Django's handler and middleware, as before ``todos/api/fast_path.py``.

Served by the benchmarks only (``daphne bench.asgi_django_api:application``), beside
``board.asgi:application``, to measure what the fast path saves.
"""

from board.asgi import django_asgi_app
from todos.api.asgi import AgentApiGuard
from todos.mcp.asgi import mount

application = mount(AgentApiGuard(django_asgi_app))

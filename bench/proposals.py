"""Prototype of a proposed change to Board's serving stack: an all-async middleware chain.

Why: Django runs an async view (every ``/api/v1/`` verb is one) natively only if every
middleware in ``MIDDLEWARE`` can run async. Board's list has two that cannot,
``whitenoise.middleware.WhiteNoiseMiddleware`` (WhiteNoise 6 is sync-only) and
``board.middleware.ContentSecurityPolicyMiddleware`` (a plain sync class). One is enough for
Django to build the whole chain in sync mode, so every request makes two thread hops: the chain
runs in a thread (``sync_to_async``, thread-sensitive: asgiref starts a new single-thread
executor per request) and the view is sent back to the event loop (``async_to_sync``).

The proposal: make both async-capable.

* the Content-Security-Policy header: the same middleware written with
  ``sync_and_async_middleware`` (Django's documented pattern);
* static files: WhiteNoise only for paths under ``STATIC_URL`` (looked up in a thread, as
  WhiteNoise may touch the disk), everything else straight to the next async middleware.

``bench/settings_async_middleware.py`` is Board's settings with these two swapped in;
``bench/http_drain.py`` serves the same code under both and compares (``--systems http@async``).
Nothing here is imported by Board itself.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.utils.decorators import sync_and_async_middleware

from board.middleware import CONTENT_SECURITY_POLICY


@sync_and_async_middleware
def content_security_policy(get_response):
    """``board.middleware.ContentSecurityPolicyMiddleware``, able to run in either mode."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            response = await get_response(request)
            response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            return response

    else:

        def middleware(request):
            response = get_response(request)
            response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            return response

    return middleware


class AsyncStaticFiles:
    """WhiteNoise for ``STATIC_URL`` paths only; async for everything else."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response):
        from asgiref.sync import async_to_sync
        from whitenoise.middleware import WhiteNoiseMiddleware

        self.get_response = get_response
        # WhiteNoise calls its get_response for a static path it cannot find: in a thread here.
        self.whitenoise = WhiteNoiseMiddleware(async_to_sync(get_response))
        self.prefix = self.whitenoise.static_prefix
        markcoroutinefunction(self)

    async def __call__(self, request):
        if request.path_info.startswith(self.prefix):
            return await sync_to_async(self.whitenoise, thread_sensitive=False)(request)
        return await self.get_response(request)


def async_middleware(middleware: list[str]) -> list[str]:
    """Board's ``MIDDLEWARE`` with the two sync-only entries replaced."""
    swap = {
        "whitenoise.middleware.WhiteNoiseMiddleware": "bench.proposals.AsyncStaticFiles",
        "board.middleware.ContentSecurityPolicyMiddleware": "bench.proposals.content_security_policy",
    }
    return [swap.get(m, m) for m in middleware]


# --- the agent API without Django's request machinery -----------------------------------------

# What Board's middleware adds to an API response today (SecurityMiddleware, XFrameOptions, CSP).
API_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
)
API_PREFIX = "/api/v1/"


class AgentApiFastPath:
    """``POST /api/v1/<verb>`` straight from the ASGI guard to ``todos.api.http.verb_view``.

    Why: the verb view is async, uses neither the session, the user, CSRF (it is exempt) nor the
    ORM, yet every request pays for Django's handler: the ``request_started`` and
    ``request_finished`` signals (sync receivers: a thread hop each), the middleware chain (sync:
    a thread hop in and one back to the loop for the view) and the per-request thread asgiref
    starts for them. This keeps what the API does need: the guard (body limit, disconnects),
    the ``ALLOWED_HOSTS`` check, the same view (so the same parsing, auth, errors and
    ``X-Request-Id``) and the same security headers; everything else (the OpenAPI document, the
    Board, websockets) goes to Board's application unchanged.
    """

    def __init__(self, app):
        from todos.api.asgi import AgentApiGuard

        self.app = app
        self.guarded = AgentApiGuard(self._direct)

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope.get("type") == "http" and path.startswith(API_PREFIX) and path != API_PREFIX + "openapi.json":
            return await self.guarded(scope, receive, send)
        return await self.app(scope, receive, send)

    async def _direct(self, scope, receive, send):
        import asyncio
        import io

        from django.core.exceptions import DisallowedHost
        from django.core.handlers.asgi import ASGIRequest
        from django.http import HttpResponseBadRequest

        from todos.api.http import verb_view

        message = await receive()  # the guard replays the whole body as one message
        request = ASGIRequest(scope, io.BytesIO(message.get("body", b"")))
        try:
            request.get_host()
        except DisallowedHost:
            response = HttpResponseBadRequest()
        else:
            view = asyncio.ensure_future(verb_view(request, scope["path"][len(API_PREFIX):]))
            gone = asyncio.ensure_future(receive())  # the guard sets its event on a disconnect
            await asyncio.wait({view, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not view.done():  # the client hung up: stop the view (a long poll) as Django would
                view.cancel()
                await asyncio.gather(view, return_exceptions=True)
                return
            gone.cancel()
            response = view.result()
        body = response.content
        for name, value in API_HEADERS + (("Content-Length", str(len(body))),):  # CommonMiddleware sets the length
            response.headers.setdefault(name, value)
        headers = [(k.encode("ascii"), v.encode("latin1")) for k, v in response.items()]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": body})

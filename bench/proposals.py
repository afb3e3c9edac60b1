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
``bench/http_drain.py`` serves the API through Django under both and compares (``--systems
http@django,http@async``). (The agent API itself no longer goes through Django's handler:
``todos/api/fast_path.py``.)
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

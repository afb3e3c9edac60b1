"""``POST /api/v1/<verb>`` served straight from ASGI to the verb view, without Django's handler.

Why: the verb view (``todos.agents.api.http.verb_view``) is async and uses none of what Django's request
machinery is for here: no session, user, CSRF (it is exempt) or ORM; it authenticates the bearer
token itself and turns every error into the API's JSON shape. Through Django's handler each call
still paid for the ``request_started``/``request_finished`` signals and the middleware chain, and
because two middlewares are sync-only (WhiteNoise, the CSP header), for two thread hops and a
fresh executor thread per request (the cost, measured: bench/README.md, "Over HTTP").

What it keeps: the guard in front (body limit, client disconnects: ``todos.agents.api.asgi``), the
``ALLOWED_HOSTS`` check, the same view (so the same parsing, auth, errors and ``X-Request-Id``),
and the headers Board's middleware puts on every response. Everything else (the OpenAPI
document, the Board, MCP, websockets) goes on to the next application unchanged.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest

from todos.agents.api.asgi import API_PREFIX, AgentApiGuard
from todos.agents.api.errors import error_body, internal_message, new_request_id

logger = logging.getLogger(__name__)

OPENAPI_PATH = API_PREFIX + "openapi.json"


def _security_headers() -> tuple[tuple[str, str], ...]:
    """What SecurityMiddleware, XFrameOptionsMiddleware and the CSP middleware add to a Board
    response, from the same settings."""
    headers = [
        ("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY),
        ("X-Frame-Options", settings.X_FRAME_OPTIONS),
    ]
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        headers.append(("Referrer-Policy", settings.SECURE_REFERRER_POLICY))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    return tuple(headers)


class AgentApiFastPath:
    """``/api/v1/<verb>`` to the verb view behind the guard; every other scope on to ``app``."""

    def __init__(self, app):
        self.app = app
        self.guarded = AgentApiGuard(self._serve)

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope.get("type") == "http" and path.startswith(API_PREFIX) and path != OPENAPI_PATH:
            return await self.guarded(scope, receive, send)
        return await self.app(scope, receive, send)

    async def _serve(self, scope, receive, send):
        """Errors inside the verb are the view's to answer; anything that escapes it (a request
        Django cannot even build) is answered here as the API's ``internal`` error, never a
        traceback, as Django's handler would have answered a 500."""
        started = False

        async def sending(message):
            nonlocal started
            started = True
            await send(message)

        try:
            await self._respond(scope, receive, sending)
        except asyncio.CancelledError:
            raise
        except Exception:
            request_id = new_request_id()
            logger.exception(
                "internal error in request %s (%s %.100s)", request_id, scope.get("method"), scope.get("path")
            )
            if not started:
                await _send_json(
                    send,
                    500,
                    error_body("internal", internal_message(request_id)),
                    request_id=request_id,
                )

    async def _respond(self, scope, receive, send):
        from todos.agents.api.http import verb_view  # imported late: Django's apps load before this runs

        message = await receive()  # the guard replays the whole body as one message
        request = ASGIRequest(scope, io.BytesIO(message.get("body", b"")))
        try:
            request.get_host()
        except DisallowedHost:
            # Django's handler answers 400 too (and logs it as django.security.DisallowedHost).
            logger.warning(
                "api: refused a request for a host not in ALLOWED_HOSTS: %.100r",
                dict(scope.get("headers", ())).get(b"host", b""),
            )
            return await _send_json(
                send, 400, error_body("invalid", "Host: not one this server answers to"), request_id=new_request_id()
            )
        view = asyncio.ensure_future(verb_view(request, scope["path"][len(API_PREFIX) :]))
        gone = asyncio.ensure_future(receive())  # completes on http.disconnect (the guard's replay)
        try:
            await asyncio.wait({view, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not view.done():  # the client hung up (or we are cancelled): stop the view, a long poll
                view.cancel()
                await asyncio.gather(view, return_exceptions=True)
            gone.cancel()
        if view.cancelled():
            return
        response = view.result()  # verb_view turns every error into a JSON response itself
        body = response.content
        for name, value in _security_headers() + (("Content-Length", str(len(body))),):
            response.headers.setdefault(name, value)
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": [(k.encode("ascii"), v.encode("latin1")) for k, v in response.items()],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _send_json(send, status: int, body: dict, *, request_id: str | None = None) -> None:
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if request_id:
        headers.append((b"x-request-id", request_id.encode()))
    headers += [(k.encode("ascii"), v.encode("latin1")) for k, v in _security_headers()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})

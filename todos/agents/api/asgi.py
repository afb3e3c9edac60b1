"""An ASGI guard in front of Django for ``/api/v1/``: the body limit, and client disconnects.

Django reads a whole request body into a spooled file before any view runs, so a view can only
refuse an oversized body after it has been stored. The guard refuses it first: on the declared
``Content-Length``, and on the bytes actually received (a chunked body declares none).

It also tells a waiting view that its client went away. Django already cancels a running async
view on ``http.disconnect`` (and asgiref carries that cancellation through the sync middleware
in the stack), which ends a long poll through ``CancelledError``. The guard adds an explicit
signal that does not depend on that machinery: an ``asyncio.Event`` in the scope
(``scope["board.client_gone"]``), set when the disconnect arrives, on which ``claim_next``'s long
poll also stops waiting. Everything else passes through untouched.
"""

from __future__ import annotations

import asyncio
import json

from django.conf import settings

from todos.agents.api.errors import error_body, new_request_id

GONE_SCOPE_KEY = "board.client_gone"
API_PREFIX = "/api/v1/"


class AgentApiGuard:
    def __init__(self, app, prefix: str = API_PREFIX):
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http" or not scope.get("path", "").startswith(self.prefix):
            return await self.app(scope, receive, send)
        limit = settings.BOARD_MAX_BODY_BYTES
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            return await _too_large(send, f"the body is {declared} bytes; the limit is {limit}")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > limit:
                return await _too_large(send, f"the body is over the limit of {limit} bytes")
            chunks.append(body)
            if not message.get("more_body", False):
                break
        gone = asyncio.Event()
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            return message

        await self.app({**scope, GONE_SCOPE_KEY: gone}, replay, send)


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send, message: str) -> None:
    body = json.dumps(error_body("too_large", message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"x-request-id", new_request_id().encode()),
                (b"cache-control", b"no-store"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

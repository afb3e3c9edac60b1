"""The agent API over real HTTP: ``api.call`` checks every answer against the verb table's
declared schemas; ``run_async`` runs an in-process scenario and closes what its loop opened."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
import jsonschema
import pytest

from todos.agents.api import schemas
from todos.agents.api.errors import STATUS
from todos.agents.api.verbs import VERBS

VALIDATORS = {name: jsonschema.Draft202012Validator(verb.output) for name, verb in VERBS.items()}
ERROR_VALIDATOR = jsonschema.Draft202012Validator(schemas.ERROR)
for validator in (*VALIDATORS.values(), ERROR_VALIDATOR):
    validator.check_schema(validator.schema)


def check_response(verb: str, response: httpx.Response) -> None:
    """Every answer is JSON, has a request id, and matches its declared schema."""
    assert response.headers["content-type"].startswith("application/json"), response.text
    assert response.headers.get("x-request-id"), response.headers
    body = response.json()
    if response.status_code < 300:
        errors = sorted(VALIDATORS[verb].iter_errors(body), key=str)
        assert not errors, f"{verb} answered outside its schema: {errors[0]}\n{body}"
    else:
        errors = list(ERROR_VALIDATOR.iter_errors(body))
        assert not errors, f"{verb} error outside the error schema: {errors[0]}\n{body}"
        assert STATUS[body["error"]["code"]] == response.status_code, body


def run_async(make_coroutine):
    """``asyncio.run`` for in-process tests, closing the loop's store pool and listener after
    (a closed loop would otherwise strand their connections until the end of the run)."""
    from todos.core import db
    from todos.live import listener as live

    async def scenario():
        try:
            return await make_coroutine()
        finally:
            running = live._listeners.pop(asyncio.get_running_loop(), None)
            if running is not None:
                await running.stop()
            await db.aclose_pool()

    return asyncio.run(scenario())


T = TypeVar("T")
# How soon a credential change (revoke, rotate, scopes, lease, capabilities) made in one process
# must show in another: its notification ends the other's cached copy in milliseconds. Well under
# BOARD_TOKEN_CACHE_SECONDS (5), so passing proves the notification, not the cache's TTL.
CREDENTIAL_NOTICE_SECONDS = 2.0
NOT_YET = (AssertionError, KeyError)


def eventually(check: Callable[[], T], within: float = CREDENTIAL_NOTICE_SECONDS) -> T:
    """``check()``'s value once it stops failing its assertions, trying for ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            return check()
        except NOT_YET:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


async def eventually_async(check: Callable[[], Awaitable[T]], within: float = CREDENTIAL_NOTICE_SECONDS) -> T:
    """:func:`eventually` for a coroutine (an MCP session's call)."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await check()
        except NOT_YET:
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.02)


@dataclass
class Api:
    """``api.call(token, verb, body)`` over real HTTP; answers are schema-checked."""

    client: httpx.Client

    def call(self, token: str | None, verb: str, body: dict | None = None, *, timeout: float = 10.0) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.client.post(
            f"/api/v1/{verb}", json={} if body is None else body, headers=headers, timeout=timeout
        )
        if verb in VERBS:
            check_response(verb, response)
        return response

    def ok(self, token: str, verb: str, body: dict | None = None, *, status: int = 200, **kwargs) -> dict:
        response = self.call(token, verb, body, **kwargs)
        assert response.status_code == status, f"{verb}: {response.status_code} {response.text}"
        return response.json()

    def error(self, token: str | None, verb: str, body: dict | None, code: str) -> str:
        response = self.call(token, verb, body)
        assert response.status_code == STATUS[code], f"{verb}: {response.status_code} {response.text}"
        assert response.json()["error"]["code"] == code, response.text
        return response.json()["error"]["message"]


@pytest.fixture
def api(asgi_server, store_db):
    with httpx.Client(base_url=asgi_server.url) as client:
        yield Api(client)


def asgi_call(
    app, path, body: bytes, *, host=b"testserver", method="POST", token=None, disconnect_after=None, extra_headers=()
):
    """Drive ``app`` with ASGI messages; returns (status, headers, body) or None when nothing was sent."""
    headers = [(b"host", host), (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    headers.extend(extra_headers)
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    sent = []

    async def main():
        first = True

        async def receive():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": body, "more_body": False}
            if disconnect_after is not None:
                await asyncio.sleep(disconnect_after)
                return {"type": "http.disconnect"}
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(app(scope, receive, send), 20)
        return asyncio.get_running_loop().time() - started

    elapsed = run_async(main)
    if not sent:
        return None, elapsed
    headers = {name.lower(): value for name, value in sent[0]["headers"]}
    return (sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])), elapsed

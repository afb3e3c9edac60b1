"""The ASGI guard in front of ``/api/v1/``, driven directly with ASGI messages."""

from __future__ import annotations

import asyncio
import json

from todos.agents.api.asgi import GONE_SCOPE_KEY, AgentApiGuard


def http_scope(path="/api/v1/list_todos", headers=()):
    return {"type": "http", "method": "POST", "path": path, "headers": list(headers)}


class Recorder:
    """A downstream app that records what it saw, and waits for the disconnect like Django does."""

    def __init__(self):
        self.scope = self.body = self.next_message = None

    async def __call__(self, scope, receive, send):
        self.scope = scope
        self.body = (await receive())["body"]
        self.next_message = await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def run(guard, scope, messages):
    sent = []
    queue = list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    asyncio.run(asyncio.wait_for(guard(scope, receive, send), 5))
    return sent


def test_a_declared_length_over_the_limit_is_refused_before_reading(settings):
    settings.BOARD_MAX_BODY_BYTES = 1024
    app = Recorder()
    sent = run(AgentApiGuard(app), http_scope(headers=[(b"content-length", b"5000")]), [])
    assert sent[0]["status"] == 413 and app.scope is None
    body = json.loads(sent[1]["body"])
    assert body["error"]["code"] == "too_large"
    assert dict(sent[0]["headers"])[b"x-request-id"]


def test_bytes_received_over_the_limit_are_refused(settings):
    settings.BOARD_MAX_BODY_BYTES = 1024
    app = Recorder()
    chunks = [{"type": "http.request", "body": b"x" * 600, "more_body": True}] * 2
    sent = run(AgentApiGuard(app), http_scope(), chunks)
    assert sent[0]["status"] == 413 and app.scope is None


def test_a_body_in_chunks_is_replayed_whole_and_the_disconnect_is_signalled(settings):
    settings.BOARD_MAX_BODY_BYTES = 1024
    app = Recorder()
    messages = [
        {"type": "http.request", "body": b'{"a":', "more_body": True},
        {"type": "http.request", "body": b"1}", "more_body": False},
        {"type": "http.disconnect"},
    ]
    run(AgentApiGuard(app), http_scope(), messages)
    assert app.body == b'{"a":1}'
    assert app.next_message == {"type": "http.disconnect"}
    assert app.scope[GONE_SCOPE_KEY].is_set()


def test_other_paths_and_protocols_pass_through_untouched(settings):
    settings.BOARD_MAX_BODY_BYTES = 1024
    app = Recorder()
    messages = [{"type": "http.request", "body": b"x" * 5000, "more_body": False}, {"type": "http.disconnect"}]
    run(AgentApiGuard(app), http_scope(path="/todos/", headers=[(b"content-length", b"5000")]), messages)
    assert app.body == b"x" * 5000 and GONE_SCOPE_KEY not in app.scope

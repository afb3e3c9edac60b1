"""Helpers for the live Board's tests: real PostgreSQL, real NOTIFY, real websocket consumers.

pytest-asyncio is not a dependency: each test runs its scenario with :func:`run`, which also stops
that event loop's listener, fan-out and async pool so the next test starts from nothing.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager

from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

WS_PATH = "/ws/board/"


def run(scenario, timeout: float = 60):
    """Run ``scenario()`` in a fresh event loop, then shut the loop's live machinery down."""

    async def wrapper():
        await get_channel_layer().flush()
        try:
            return await asyncio.wait_for(scenario(), timeout)
        finally:
            await shutdown_loop()

    return asyncio.run(wrapper())


async def shutdown_loop():
    from todos.core import db
    from todos.live.fanout import stop_live

    await stop_live()
    await db.aclose_pool()


def session_cookie(user) -> str:
    """A real session for ``user`` (Django's login through the test client)."""
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def application():
    from board.asgi import application as app

    return app


@asynccontextmanager
async def board_socket(cookie: str | None, *, subscribe: dict | None = None):
    """A connected ``/ws/board/`` socket (through the real routing, origin check and session
    auth), its first status message consumed and, if given, its subscription acknowledged."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if cookie is not None:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    comm = WebsocketCommunicator(application(), WS_PATH, headers=headers)
    connected, _ = await comm.connect(timeout=10)
    assert connected
    try:
        if cookie is not None:
            status = await poll(comm, 5)
            assert status and status["type"] == "status", status
        if subscribe is not None:
            await comm.send_json_to({"subscribe": subscribe})
            # a change that reached the socket before its subscription was decided without it:
            # it may come first (a test's own setup, committed just before), and is not the test's
            while (ack := await poll(comm, 5)) and ack["type"] == "changed":
                pass
            assert ack and ack["type"] == "subscribed", ack
        yield comm
    finally:
        await comm.disconnect()


async def poll(comm, timeout: float) -> dict | None:
    """The next message within ``timeout`` seconds, or None. (The communicator's own
    ``receive_from`` cancels the application when it times out; this never does.)"""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if not comm.output_queue.empty():
            message = await comm.receive_output(timeout=1)
            if message["type"] == "websocket.close":
                return {"type": "websocket.close", "code": message.get("code")}
            return json.loads(message["text"])
        if loop.time() >= deadline:
            return None
        await comm.receive_nothing(timeout=min(0.02, deadline - loop.time() + 0.001), interval=0.005)


async def next_message(comm, *, timeout: float = 5.0, skip=("status",)) -> dict:
    """The next message that is not one of ``skip``'s types (fails after ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        message = await poll(comm, max(0.0, deadline - loop.time()))
        assert message is not None, f"no message within {timeout} s"
        if message["type"] not in skip:
            return message


async def drain(comm, seconds: float) -> list[dict]:
    """Every message received within ``seconds``."""
    got = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := deadline - loop.time()) > 0:
        message = await poll(comm, left)
        if message is None:
            break
        got.append(message)
    return got

"""An event loop that used the store ends, wherever its pool and its listener were when it did.

``asyncio.run`` ends by cancelling every task left and waiting for them; a task that swallows its
own cancellation keeps that wait, and the process, going for ever (no test timeout can interrupt
it). Each loop has its own pool (``todos.core.db.apool``) and its own listener
(``todos.live.listener``); the test run makes a loop per ASGI call, a command may make one too.
Each case runs the loop in a thread and waits a bounded time for it.
"""

from __future__ import annotations

import asyncio
import threading

import psycopg
import pytest

from todos.core import db
from todos.core.db import apool, connect
from todos.live.listener import get_listener

pytestmark = pytest.mark.usefixtures("store_db")

ENDS_WITHIN = 15.0


def ends(main) -> bool:
    """Run ``asyncio.run(main())`` in a thread: True when it returned (or raised) in time."""
    finished = threading.Event()
    errors: list[BaseException] = []

    def run():
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            finished.set()

    threading.Thread(target=run, daemon=True, name="loop-under-test").start()
    done = finished.wait(ENDS_WITHIN)
    assert not errors, errors
    return done


def test_a_loop_ends_while_its_pool_is_still_opening_connections(monkeypatch):
    """psycopg_pool's workers count a cancelled connection attempt as a failed one and wait for
    the next task; the store's pool ends a worker whose own task was cancelled."""
    opening = []
    original = db.AsyncStoreConnection.connect.__func__

    async def slow_connect(cls, conninfo="", **kwargs):
        opening.append(1)
        await asyncio.sleep(1)  # the loop ends during this
        return await original(cls, conninfo, **kwargs)

    monkeypatch.setattr(db.AsyncStoreConnection, "connect", classmethod(slow_connect))

    async def main():
        await apool()  # opens in the background: its workers start connecting
        await asyncio.sleep(0.1)

    assert ends(main), "the loop never ended: a pool worker swallowed its cancellation"
    assert opening, "no connection attempt was under way when the loop ended"


def test_a_loop_ends_while_its_listener_is_closing_a_lost_connection(monkeypatch):
    """The listener closes a connection it lost before reconnecting; a cancellation arriving then
    ends it rather than being taken for the close's own failure."""
    closing = threading.Event()
    original = psycopg.AsyncConnection.close

    async def slow_close(self):  # only the listener closes connections in this loop
        closing.set()
        await asyncio.sleep(2)  # the loop ends during this
        await original(self)

    async def main():
        listener = get_listener()
        listener.start()
        assert await listener.wait_connected()
        monkeypatch.setattr(psycopg.AsyncConnection, "close", slow_close)
        with connect() as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
        while not closing.is_set():
            await asyncio.sleep(0.01)

    assert ends(main), "the loop never ended: the listener swallowed its cancellation"

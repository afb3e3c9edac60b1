"""The process's LISTEN connection: backoff, logging, recovery, liveness probes."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.support.live import run
from todos.core import db
from todos.core.db import aconnect
from todos.live import listener as listener_module

pytestmark = pytest.mark.usefixtures("store_db")


def test_an_unreachable_database_is_retried_with_doubling_backoff_then_recovered(monkeypatch, caplog):
    monkeypatch.setattr(listener_module, "BACKOFF_START", 0.05)
    monkeypatch.setattr(listener_module, "BACKOFF_MAX", 0.2)
    # The listener's session connection (BOARD_LISTEN_URL, else the store's database).
    real = db.session_conninfo()
    monkeypatch.setattr(db, "session_conninfo", lambda: "host=127.0.0.1 port=1 dbname=none user=none")

    async def scenario():
        listener = listener_module.get_listener()
        states, reconnects = [], []
        listener.on_state(states.append)
        listener.on_reconnect(lambda: reconnects.append(True))
        await asyncio.sleep(1.0)
        down = (listener.state, listener.backend_pid, await listener.wait_connected(0.01))
        monkeypatch.setattr(db, "session_conninfo", lambda: real)
        assert await listener.wait_connected(2)
        got = asyncio.Queue()
        listener.subscribe("board_events", got.put_nowait)
        conn = await aconnect()
        await conn.execute("""SELECT pg_notify('board_events', '{"op": "create", "team": "x"}')""")
        await conn.close()
        return down, states, reconnects, await asyncio.wait_for(got.get(), 5)

    down, states, reconnects, event = run(scenario)
    assert down == ("reconnecting", None, False)
    assert states == ["reconnecting", "live"]
    assert reconnects == [True]  # clients resync: the outage may have swallowed notifications
    assert event == {"op": "create", "team": "x"}
    messages = [r.getMessage() for r in caplog.records if r.name == "todos.live.listener"]
    delays = [float(m) for m in re.findall(r"retrying in ([\d.]+) s", "\n".join(messages))]
    assert delays[:4] == [0.05, 0.1, 0.2, 0.2]
    assert "lost its connection" in messages[0] and "still down" in messages[1]
    assert "recovered after" in messages[-1]


def test_liveness_probes_lose_no_notification(monkeypatch):
    """Every PROBE_INTERVAL the listener leaves ``notifies()`` to run ``SELECT 1``; what arrives
    meanwhile waits in psycopg's backlog."""
    monkeypatch.setattr(listener_module, "PROBE_INTERVAL", 0.01)

    async def scenario():
        listener = listener_module.get_listener()
        assert await listener.wait_connected()
        got = []
        listener.subscribe("board_events", got.append)
        conn = await aconnect()
        for i in range(300):
            await conn.execute("SELECT pg_notify('board_events', %s)", [f'{{"n": {i}}}'])
            if i % 10 == 0:
                await asyncio.sleep(0.005)
        await conn.close()
        for _ in range(100):
            if len(got) == 300:
                break
            await asyncio.sleep(0.05)
        return [e["n"] for e in got]

    assert run(scenario) == list(range(300))


def test_a_failing_subscriber_does_not_stop_the_others(caplog):
    async def scenario():
        listener = listener_module.get_listener()
        assert await listener.wait_connected()

        def broken(event):
            raise RuntimeError("subscriber bug")

        got = asyncio.Queue()
        listener.subscribe("board_events", broken)
        listener.subscribe("board_events", got.put_nowait)
        conn = await aconnect()
        await conn.execute("""SELECT pg_notify('board_events', '{"op": "x"}')""")
        await conn.close()
        return await asyncio.wait_for(got.get(), 5)

    assert run(scenario) == {"op": "x"}
    assert any("subscriber" in r.getMessage() and r.exc_info for r in caplog.records)


def test_one_listener_per_event_loop_started_once():
    async def scenario():
        first = listener_module.get_listener()
        assert await first.wait_connected()
        pid = first.backend_pid
        conn = await aconnect()
        count = "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'board-live-listener'"
        before = (await (await conn.execute(count)).fetchone())["n"]  # a test server may have its own
        again = [listener_module.get_listener() for _ in range(5)]
        await asyncio.sleep(0.1)
        after = (await (await conn.execute(count)).fetchone())["n"]
        await conn.close()
        return all(x is first for x in again), pid == first.backend_pid, before, after

    same, same_pid, before, after = run(scenario)
    assert same and same_pid and before == after >= 1


def test_a_dropped_connection_is_reconnected_at_once_then_with_backoff(monkeypatch, caplog):
    """A terminated backend (the server is there) costs the listener milliseconds, not the 1 s
    first backoff; two drops within AT_ONCE_SECONDS fall back to the backoff."""
    monkeypatch.setattr(listener_module, "AT_ONCE_SECONDS", 0.5)

    async def scenario():
        listener = listener_module.get_listener()
        assert await listener.wait_connected()
        reconnects = []
        listener.on_reconnect(lambda: reconnects.append(asyncio.get_running_loop().time()))
        timings = []
        for _ in range(2):
            pid = listener.backend_pid
            killed_at = asyncio.get_running_loop().time()
            async with await aconnect() as conn:
                await conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            while listener.backend_pid in (pid, None) or listener.state != "live":
                await asyncio.sleep(0.005)
            timings.append(asyncio.get_running_loop().time() - killed_at)
        return timings, len(reconnects)

    (first, second), reconnects = run(scenario)
    assert first < 0.5, first  # at once (before: BACKOFF_START, 1 s)
    assert second >= listener_module.BACKOFF_START * 0.9, second  # the second drop within 0.5 s: backoff
    assert reconnects == 2  # each recovery tells clients to resync
    messages = [r.getMessage() for r in caplog.records if r.name == "todos.live.listener"]
    assert any("reconnecting at once" in m for m in messages)

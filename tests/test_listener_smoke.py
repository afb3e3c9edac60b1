import asyncio

import pytest

from tests import factories
from todos.core.db import aexecute
from todos.core.store import agent as agent_store
from todos.live.listener import get_listener

pytestmark = pytest.mark.usefixtures("store_db")


def test_listener_receives_a_committed_transition():
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    factories.relayed()  # the vend's own notification is out before listening starts

    async def scenario():
        listener = get_listener()
        assert await listener.wait_connected()
        got = asyncio.Queue()
        listener.subscribe("board_events", got.put_nowait)
        ready = asyncio.Queue()
        listener.subscribe("board_ready", ready.put_nowait)
        created = await aexecute(agent_store.create(ep, queue="default", title="t"))
        event = await asyncio.wait_for(got.get(), 5)
        wake = await asyncio.wait_for(ready.get(), 5)
        await listener.stop()
        return created, event, wake

    created, event, wake = asyncio.run(scenario())
    assert event["op"] == "create" and event["ids"] == [created.todo.id]
    assert event["team"] == str(team.id) and "payload" not in event
    assert wake == {"endpoint": str(ep.endpoint_id), "queue": "default", "n": 1}

"""The Board's in-memory channel layer: the stock semantics, without the per-message O(sockets)
bookkeeping."""

from __future__ import annotations

import asyncio
import logging

from todos.live.layer import BoardChannelLayer


def test_group_send_reaches_every_member_once_and_isolates_the_copies():
    async def scenario():
        layer = BoardChannelLayer()
        channels = [await layer.new_channel() for _ in range(3)]
        for channel in channels:
            await layer.group_add("team.x", channel)
        await layer.group_add("team.y", channels[0])
        await layer.group_send("team.x", {"type": "board.changed", "ids": ["a"]})
        got = [await asyncio.wait_for(layer.receive(c), 1) for c in channels]
        got[0]["type"] = "mutated"
        return got, [layer.channels.get(c) for c in channels]

    got, leftovers = asyncio.run(scenario())
    assert [g["ids"] for g in got] == [["a"]] * 3
    assert got[1]["type"] == "board.changed"  # one recipient's change is not another's
    assert leftovers == [None, None, None]


def test_a_full_queue_drops_the_message_for_that_member_only_and_says_so(caplog):
    async def scenario():
        layer = BoardChannelLayer(capacity=2)
        slow, fast = await layer.new_channel(), await layer.new_channel()
        for channel in (slow, fast):
            await layer.group_add("team.x", channel)
        for i in range(3):
            await layer.group_send("team.x", {"type": "board.changed", "n": i})
        received = []
        for _ in range(2):
            received.append((await layer.receive(fast))["n"])
        return received

    with caplog.at_level(logging.WARNING, logger="todos.live.layer"):
        received = asyncio.run(scenario())
    assert received == [0, 1]
    assert sum("queue is full" in r.getMessage() for r in caplog.records) == 2  # both members overflowed once


def test_expiry_still_happens_but_at_most_once_a_second():
    async def scenario():
        layer = BoardChannelLayer(expiry=0.05)
        channel = await layer.new_channel()
        await layer.group_add("team.x", channel)
        await layer.send(channel, {"type": "x"})
        await asyncio.sleep(0.1)
        layer._last_clean = float("-inf")
        layer._clean_expired()  # the expired message goes, and with it the group membership
        first = {group: dict(members) for group, members in layer.groups.items()}
        await layer.group_add("team.x", channel)
        await layer.send(channel, {"type": "y"})
        await asyncio.sleep(0.1)
        layer._clean_expired()  # within the second: skipped
        return first, {group: dict(members) for group, members in layer.groups.items()}

    first, second = asyncio.run(scenario())
    assert first == {"team.x": {}}
    assert len(second["team.x"]) == 1  # the second expired message is still there, and so is the member

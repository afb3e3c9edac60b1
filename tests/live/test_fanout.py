"""The fan-out from the listener's callbacks to the channel layer's groups (driven through a real
``Listener``'s dispatch, with payloads as the store's NOTIFY spells them; no database needed)."""

from __future__ import annotations

import asyncio
import json
import uuid

from todos.live.fanout import FanOut
from todos.live.groups import EVERYONE, team_group, user_group
from todos.live.layer import BoardChannelLayer
from todos.live.listener import Listener

TEAM_A, TEAM_B = str(uuid.uuid4()), str(uuid.uuid4())


def note(op, team, ids=(), queues=("q",), **extra):
    return json.dumps({"op": op, "team": team, "ids": list(ids), "queues": list(queues), "endpoints": [], **extra})


async def setup(interval=0.1):
    loop = asyncio.get_running_loop()
    listener = Listener(loop)  # not started: the test plays the connection's part
    layer = BoardChannelLayer()
    fanout = FanOut(listener, layer, interval=interval)
    inbox = {}
    for name, groups in {
        "a": [team_group(TEAM_A), EVERYONE],
        "b": [team_group(TEAM_B), EVERYONE],
        "u7": [user_group(7)],
    }.items():
        inbox[name] = await layer.new_channel()
        for group in groups:
            await layer.group_add(group, inbox[name])
    return loop, listener, layer, fanout, inbox


async def take(layer, channel, timeout=1.0):
    return await asyncio.wait_for(layer.receive(channel), timeout)


def test_a_team_hears_only_its_own_notifications_merged_per_window():
    async def scenario():
        loop, listener, layer, fanout, inbox = await setup()
        t0 = loop.time()
        listener._dispatch("board_events", note("claim", TEAM_A, ["t1"]))
        first = await take(layer, inbox["a"])
        at_first = loop.time() - t0
        listener._dispatch("board_events", note("heartbeat", TEAM_A, ["t1"]))
        listener._dispatch("board_events", note("create", TEAM_A, ["t2"], queues=["r"]))
        await asyncio.sleep(0.01)
        listener._dispatch("board_events", note("fail", TEAM_B, ["t9"]))
        other = await take(layer, inbox["b"])
        at_other = loop.time() - t0
        merged = await take(layer, inbox["a"])
        at_merged = loop.time() - t0
        empty = layer.channels.get(inbox["a"]), layer.channels.get(inbox["b"])
        fanout.close()
        return first, at_first, other, at_other, merged, at_merged, empty

    first, at_first, other, at_other, merged, at_merged, empty = asyncio.run(scenario())
    text = first.pop("text")
    assert first == {
        "type": "board.changed",
        "team": TEAM_A,
        "ids": ["t1"],
        "queues": ["q"],
        "ops": ["claim"],
        "endpoints": [],
        "users": [],
    }
    # the browser's message, encoded once for every tab of the team
    assert json.loads(text) == {"type": "changed", "ids": ["t1"], "queues": ["q"], "ops": ["claim"], "teams": [TEAM_A]}
    assert at_first < 0.09  # the first of a quiet window leaves at once (well before its end)
    assert other["team"] == TEAM_B and other["ids"] == ["t9"]
    assert at_other < at_merged  # another team's window is its own: it does not wait for team A's
    assert merged["ids"] == ["t1", "t2"] and merged["ops"] == ["heartbeat", "create"] and merged["queues"] == ["q", "r"]
    assert 0.09 <= at_merged < 0.5  # the rest of the busy window, together, when it ends
    assert empty == (None, None)  # exactly one message each, nothing else


def test_notifications_of_one_socket_read_travel_as_one_message_even_without_a_window():
    async def scenario():
        loop, listener, layer, fanout, inbox = await setup(interval=0)
        for i in range(120):  # what a reaper sweep's chunks look like, back to back
            listener._dispatch("board_events", note("reap", TEAM_A, [f"t{i}"]))
        got = await take(layer, inbox["a"])
        leftover = layer.channels.get(inbox["a"])
        fanout.close()
        return got, leftover

    got, leftover = asyncio.run(scenario())
    assert len(got["ids"]) == 120 and leftover is None


def test_a_membership_change_naming_a_human_also_reaches_their_own_group():
    async def scenario():
        loop, listener, layer, fanout, inbox = await setup()
        listener._dispatch("board_events", note("membership", TEAM_B, queues=[], user=7))
        mine, team = await take(layer, inbox["u7"]), await take(layer, inbox["b"])
        fanout.close()
        return mine, team

    mine, team = asyncio.run(scenario())
    assert mine == team and mine["users"] == [7] and mine["ops"] == ["membership"]


def test_recovery_and_state_go_to_everyone_and_junk_goes_nowhere(caplog):
    async def scenario():
        loop, listener, layer, fanout, inbox = await setup()
        for junk in ('{"op": "create"}', '{"team": "nope", "op": "create"}', f'{{"team": "{TEAM_A}"}}'):
            listener._dispatch("board_events", junk)
        listener._set_state("reconnecting")
        listener._set_state("live")
        listener._dispatch_reconnect()
        got = [await take(layer, inbox["a"]) for _ in range(3)]
        fanout.close()
        listener._dispatch("board_events", note("claim", TEAM_A, ["t1"]))  # closed: not forwarded
        await asyncio.sleep(0.05)
        return got, layer.channels.get(inbox["a"])

    got, leftover = asyncio.run(scenario())
    assert got == [
        {"type": "board.status", "state": "reconnecting"},
        {"type": "board.status", "state": "live"},
        {"type": "board.resync"},
    ]
    assert leftover is None
    assert sum(r.levelname == "ERROR" for r in caplog.records) == 3

"""Per-client coalescing (no database: the outbox is plain asyncio)."""

from __future__ import annotations

import asyncio

from todos.live.outbox import Outbox


class Recorder:
    def __init__(self):
        self.messages: list[tuple[float, dict]] = []

    async def __call__(self, message):
        self.messages.append((asyncio.get_running_loop().time(), message))


def scenario(body):
    async def main():
        sent = Recorder()
        outbox = Outbox(sent, interval=0.1, max_ids=5)
        try:
            await body(outbox)
        finally:
            await outbox.close()
        return sent.messages

    return asyncio.run(main())


def test_the_first_change_after_a_quiet_period_goes_out_at_once():
    async def body(outbox):
        start = asyncio.get_running_loop().time()
        outbox.add(ids=["a"], queues=["q"], ops=["claim"], teams=["t"])
        await asyncio.sleep(0.08)
        body.start = start

    messages = scenario(body)
    assert len(messages) == 1
    at, message = messages[0]
    assert at - body.start < 0.05  # not held for the 0.1 s window
    assert message == {"type": "changed", "ids": ["a"], "queues": ["q"], "ops": ["claim"], "teams": ["t"]}


def test_changes_within_the_interval_leave_together_and_the_latest_wins():
    async def body(outbox):
        outbox.add(ids=["a"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=["z"], ops=["create"])  # spends the spare token
        await asyncio.sleep(0.01)
        for op, todo in [("heartbeat", "a"), ("create", "b"), ("heartbeat", "a"), ("fail", "a")]:
            outbox.add(ids=[todo], queues=["q"], ops=[op], teams=["t"])
        await asyncio.sleep(0.4)

    messages = scenario(body)
    assert len(messages) == 3
    (first_at, _), (_, spare), (third_at, third) = messages
    assert spare["ids"] == ["z"]
    assert 0.08 <= third_at - first_at <= 0.3  # waited for a token: the bucket held two
    assert third["ids"] == ["a", "b"] and third["ops"] == ["heartbeat", "create", "fail"]


def test_a_continuous_stream_is_sent_at_most_ten_times_a_second():
    async def body(outbox):
        loop = asyncio.get_running_loop()
        end = loop.time() + 1.0
        n = 0
        while loop.time() < end:
            outbox.add(ids=[str(n % 3)], ops=["heartbeat"])
            n += 1
            await asyncio.sleep(0.002)
        await asyncio.sleep(0.15)

    messages = scenario(body)
    # one token per 0.1 s plus the two saved up: at most 12 in the second (fewer if this machine is busy)
    assert 5 <= len(messages) <= 13
    gaps = [b[0] - a[0] for a, b in zip(messages, messages[1:])]
    assert min(gaps[2:]) >= 0.09  # once the saved tokens are spent, one per interval


def test_a_resync_discards_pending_changes_and_goes_first():
    async def body(outbox):
        outbox.add(ids=["a"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=["y"], ops=["claim"])  # the spare token
        await asyncio.sleep(0.01)
        outbox.add(ids=["b"], ops=["claim"])  # waits for a token…
        outbox.resync()  # …and is superseded
        outbox.control({"type": "status", "state": "live"})
        await asyncio.sleep(0.2)

    messages = [m for _, m in scenario(body)]
    assert messages == [
        {"type": "changed", "ids": ["a"], "queues": [], "ops": ["claim"], "teams": []},
        {"type": "changed", "ids": ["y"], "queues": [], "ops": ["claim"], "teams": []},
        {"type": "resync"},
        {"type": "status", "state": "live"},
    ]


def test_more_ids_than_the_cap_become_an_overflow():
    async def body(outbox):
        outbox.add(ids=["x"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=["w"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=list("abcdef"), ops=["cancel"])
        outbox.add(ids=["g"], ops=["retry"])
        await asyncio.sleep(0.2)

    messages = [m for _, m in scenario(body)]
    assert messages[2] == {
        "type": "changed",
        "ids": [],
        "queues": [],
        "ops": ["cancel", "retry"],
        "teams": [],
        "overflow": True,
    }


def test_a_failing_socket_stops_the_outbox_quietly():
    async def main():
        async def broken(message):
            raise ConnectionError("gone")

        outbox = Outbox(broken, interval=0.05)
        outbox.add(ids=["a"], ops=["claim"])
        await asyncio.sleep(0.05)
        done = outbox._task.done()
        await outbox.close()
        return done

    assert asyncio.run(main()) is True


def test_push_sends_from_the_callers_task_when_a_token_is_there():
    async def body(outbox):
        await asyncio.sleep(0)  # the outbox's task is waiting for work
        task = asyncio.current_task()
        senders = []
        original = outbox._send

        async def recording(message):
            senders.append(asyncio.current_task())
            await original(message)

        outbox._send = recording
        await outbox.push(ids=["a"], ops=["claim"], teams=["t"])
        body.inline = senders == [task]  # sent before push returned, by the caller
        await outbox.push(ids=["b"], ops=["claim"])
        await outbox.push(ids=["c"], ops=["claim"])  # no token left: the outbox's task sends it later
        body.after_two = len(senders)
        await asyncio.sleep(0.15)
        body.later = [s is task for s in senders]

    messages = [m for _, m in scenario(body)]
    assert body.inline is True
    assert body.after_two == 2
    assert body.later == [True, True, False]
    assert [m["ids"] for m in messages] == [["a"], ["b"], ["c"]]


def test_push_sends_the_pre_encoded_text_only_when_nothing_was_merged_with_it():
    async def body(outbox):
        await asyncio.sleep(0)
        await outbox.push(ids=["a"], ops=["claim"], text='{"type": "changed", "pre": "a"}')
        await outbox.push(ids=["b"], ops=["claim"], text='{"type": "changed", "pre": "b"}')
        outbox.add(ids=["c"], ops=["create"])  # waits for a token…
        await outbox.push(ids=["d"], ops=["claim"], text='{"type": "changed", "pre": "d"}')  # …and d joins it
        await asyncio.sleep(0.15)

    messages = [m for _, m in scenario(body)]
    assert messages[:2] == ['{"type": "changed", "pre": "a"}', '{"type": "changed", "pre": "b"}']
    assert messages[2] == {"type": "changed", "ids": ["c", "d"], "queues": [], "ops": ["create", "claim"], "teams": []}


def test_push_never_sends_a_pre_encoded_text_for_an_overflow():
    async def body(outbox):
        await asyncio.sleep(0)
        await outbox.push(ids=list("abcdefg"), ops=["cancel"], text='{"type": "changed", "pre": "all"}')

    messages = [m for _, m in scenario(body)]
    assert messages == [{"type": "changed", "ids": [], "queues": [], "ops": ["cancel"], "teams": [], "overflow": True}]


def test_a_failing_socket_on_the_inline_path_is_logged_not_raised(caplog):
    async def main():
        async def broken(message):
            raise ConnectionError("gone")

        outbox = Outbox(broken, interval=0.05)
        await asyncio.sleep(0)
        await outbox.push(ids=["a"], ops=["claim"])  # must not raise into the consumer
        await outbox.close()

    with caplog.at_level("INFO", logger="todos.live.outbox"):
        asyncio.run(main())
    assert "sending failed" in caplog.text

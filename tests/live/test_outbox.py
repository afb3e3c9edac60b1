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
        for op, todo in [("heartbeat", "a"), ("create", "b"), ("heartbeat", "a"), ("fail", "a")]:
            outbox.add(ids=[todo], queues=["q"], ops=[op], teams=["t"])
        await asyncio.sleep(0.4)

    messages = scenario(body)
    assert len(messages) == 2
    (first_at, _), (second_at, second) = messages
    assert 0.09 <= second_at - first_at <= 0.3
    assert second["ids"] == ["a", "b"] and second["ops"] == ["heartbeat", "create", "fail"]


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
    assert 5 <= len(messages) <= 12  # at most ~10 a second (fewer if this machine is busy)
    gaps = [b[0] - a[0] for a, b in zip(messages, messages[1:])]
    assert min(gaps) >= 0.095


def test_a_resync_discards_pending_changes_and_goes_first():
    async def body(outbox):
        outbox.add(ids=["a"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=["b"], ops=["claim"])  # waits for the interval…
        outbox.resync()  # …and is superseded
        outbox.control({"type": "status", "state": "live"})
        await asyncio.sleep(0.2)

    messages = [m for _, m in scenario(body)]
    assert messages == [
        {"type": "changed", "ids": ["a"], "queues": [], "ops": ["claim"], "teams": []},
        {"type": "resync"},
        {"type": "status", "state": "live"},
    ]


def test_more_ids_than_the_cap_become_an_overflow():
    async def body(outbox):
        outbox.add(ids=["x"], ops=["claim"])
        await asyncio.sleep(0.01)
        outbox.add(ids=list("abcdef"), ops=["cancel"])
        outbox.add(ids=["g"], ops=["retry"])
        await asyncio.sleep(0.2)

    messages = [m for _, m in scenario(body)]
    assert messages[1] == {"type": "changed", "ids": [], "queues": [], "ops": ["cancel", "retry"], "teams": [],
                           "overflow": True}


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

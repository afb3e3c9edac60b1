"""The ``todo_ready`` notifier on its own: which ``board_ready`` signals reach which sessions, and
what a failed delivery does. The signals are handed to it directly (as the process listener
would); the credential behind each session is looked up in the real database."""

from __future__ import annotations

import asyncio
import logging

from tests import factories
from tests.mcp.client import run
from todos.agents.mcp.ready import METHOD, ReadyNotifier
from todos.core.db import aexecute, execute
from todos.core.selectors.agent_api import credential_for
from todos.core.store import endpoints
from todos.core.store.endpoints import token_hash
from todos.live.listener import Listener


class Outbound:
    """Stands in for the SDK connection's standalone stream: records what would be sent."""

    def __init__(self, fail: int = 0):
        self.sent: list[tuple[str, dict]] = []
        self.fail = fail

    async def notify(self, method, params):
        if self.fail:
            self.fail -= 1
            raise RuntimeError("stream broke")
        self.sent.append((method, params))


async def settle(notifier: ReadyNotifier) -> None:
    for _ in range(50):
        tasks = [s.task for s in notifier.sessions.values() if s.task is not None and not s.task.done()]
        if not tasks:
            await asyncio.sleep(0)
            return
        await asyncio.wait(tasks, timeout=5)


async def tracked(vended, session_id: str, outbound: Outbound) -> tuple[ReadyNotifier, object]:
    notifier = ReadyNotifier(Listener(asyncio.get_running_loop()))
    digest = token_hash(vended.token)
    credential = await aexecute(credential_for(digest))
    assert notifier.track(session_id, credential, digest, outbound) is True
    assert notifier.track(session_id, credential, digest, outbound) is False  # a refresh
    return notifier, credential


def test_signals_reach_the_sessions_of_their_endpoint_and_queue(store_db):
    team = factories.team()
    mine = factories.endpoint(team, queues=("default", "other"))
    theirs = factories.endpoint(team, queues=("default",))

    async def scenario():
        outbound = Outbound()
        notifier, credential = await tracked(mine, "s1", outbound)
        endpoint = str(credential.endpoint_id)
        for payload in (
            {"endpoint": endpoint, "queue": "default"},
            {"endpoint": endpoint, "queue": "default"},  # coalesced with the first
            {"endpoint": endpoint, "queue": "elsewhere"},  # not in its scope
            {"endpoint": str(theirs.endpoint.id), "queue": "default"},  # another endpoint's
            {"endpoint": endpoint, "queue": 5},  # malformed
            {"queue": "default"},  # malformed
        ):
            notifier._ready(payload)
        await settle(notifier)
        notifier._resync()  # the listener recovered: everything in scope
        await settle(notifier)
        return outbound.sent

    sent = run(scenario())
    assert sent[0] == (METHOD, {"queue": "default"})
    assert sorted(q["queue"] for _, q in sent[1:]) == ["default", "other"]
    assert len(sent) == 3


def test_a_burst_of_signals_is_one_message_per_queue(store_db):
    mine = factories.endpoint(factories.team(), queues=("default", "other"))

    async def scenario():
        outbound = Outbound()
        notifier, credential = await tracked(mine, "s1", outbound)
        for n in range(30):
            notifier._ready({"endpoint": str(credential.endpoint_id), "queue": ("default", "other")[n % 2]})
        await settle(notifier)
        return outbound.sent

    sent = run(scenario())
    assert sorted(params["queue"] for _, params in sent) == ["default", "other"]


def test_a_failed_delivery_is_logged_and_the_next_one_goes_through(store_db, caplog):
    mine = factories.endpoint(factories.team(), queues=("default",))

    async def scenario():
        outbound = Outbound(fail=1)
        notifier, credential = await tracked(mine, "s1", outbound)
        with caplog.at_level(logging.ERROR, logger="todos.agents.mcp"):
            notifier._ready({"endpoint": str(credential.endpoint_id), "queue": "default"})
            await settle(notifier)
        notifier._ready({"endpoint": str(credential.endpoint_id), "queue": "default"})
        await settle(notifier)
        return outbound.sent, notifier.sessions

    sent, sessions = run(scenario())
    assert "could not send notifications/todo_ready" in caplog.text
    assert sent == [(METHOD, {"queue": "default"})]
    assert "s1" in sessions


def test_a_session_whose_token_no_longer_works_is_forgotten(store_db):
    mine = factories.endpoint(factories.team(), queues=("default",))

    async def scenario():
        outbound = Outbound()
        notifier, credential = await tracked(mine, "s1", outbound)
        execute(endpoints.rotate(None, mine.endpoint.id))
        notifier._ready({"endpoint": str(credential.endpoint_id), "queue": "default"})
        await settle(notifier)
        return outbound.sent, dict(notifier.sessions), dict(notifier._by_endpoint)

    sent, sessions, by_endpoint = run(scenario())
    assert sent == [] and sessions == {} and by_endpoint == {}


def test_forgetting_a_session_cancels_its_delivery(store_db):
    mine = factories.endpoint(factories.team(), queues=("default",))

    async def scenario():
        outbound = Outbound()
        notifier, credential = await tracked(mine, "s1", outbound)
        notifier._ready({"endpoint": str(credential.endpoint_id), "queue": "default"})
        task = notifier.sessions["s1"].task
        notifier.forget("s1")
        notifier.forget("s1")  # twice is harmless
        await asyncio.gather(task, return_exceptions=True)
        return outbound.sent, task.cancelled()

    sent, cancelled = run(scenario())
    assert sent == [] and cancelled

"""``notifications/todo_ready``: a live session hears when work arrives in one of its queues.

The notification rides the client's GET stream; one sent before the server has that stream is
lost by design (the queue is the ledger), and the client cannot tell when it is ready (the
stream's headers come with its first event). So each test first proves delivery with warm-up
work, retried until a notification arrives, before asserting anything, least of all that
something is *not* delivered.
"""

from __future__ import annotations

import asyncio
import json

from tests import factories
from tests.mcp.client import Inbox, mcp_client, run
from todos.core.db import connect, execute
from todos.core.store import agent as store
from todos.core.store import endpoints

QUIET = 1.0  # how long "nothing arrives" is watched for


def announce(endpoint_id, queue: str) -> None:
    """Test setup: the store's ``board_ready`` signal, sent by hand (as if work appeared)."""
    with connect() as conn:
        payload = json.dumps({"endpoint": str(endpoint_id), "queue": queue})
        conn.execute("SELECT pg_notify('board_ready', %s)", (payload,))


async def listening(client, inbox: Inbox, agent) -> None:
    """Prove the session's notification stream delivers (retrying while it is being set up)."""
    for _ in range(15):
        execute(store.create(agent, queue="other", title="warm-up"))
        if await inbox.wait_for("other", timeout=1.0):
            inbox.clear()
            return
    raise AssertionError("no todo_ready arrived on an open stream")


def test_todo_ready_arrives_when_another_agent_creates_work_in_the_sessions_queue(url, tenancy):
    producer = factories.endpoint(tenancy.team, slug="producer", verbs=["create_for"], queues=("default", "intake"))

    async def scenario():
        inbox = Inbox()
        async with mcp_client(url, tenancy.token, inbox=inbox) as worker:
            await listening(worker, inbox, tenancy.agent)
            async with mcp_client(url, producer.token) as other:
                # Work the producer keeps for itself is not the worker's news...
                own = await other.session.call_tool("create_for", {"queue": "intake", "title": "mine"})
                assert own.is_error is False
                assert not await inbox.wait_for("intake", timeout=QUIET)
                # ...work handed to the worker is.
                handed = await other.session.call_tool(
                    "create_for", {"queue": "default", "title": "yours", "endpoint": "worker"}
                )
                assert handed.is_error is False, handed.content[0].text
                arrived = await inbox.wait_for("default")
            claimed = await worker.session.call_tool("claim_next", {"queue": "default"})
            return arrived, list(inbox.queues), claimed.structured_content

    arrived, queues, claimed = run(scenario())
    assert arrived and queues == ["default"]
    assert claimed["todo"]["title"] == "yours"


def test_todo_ready_follows_the_current_scope(url, tenancy):
    async def scenario():
        inbox = Inbox()
        async with mcp_client(url, tenancy.token, inbox=inbox) as worker:
            await listening(worker, inbox, tenancy.agent)
            execute(endpoints.set_scopes(None, tenancy.worker.endpoint.id, verbs=["claim_next"], queues=["default"]))
            announce(tenancy.worker.endpoint.id, "other")
            announce(tenancy.worker.endpoint.id, "default")
            assert await inbox.wait_for("default")
            await asyncio.sleep(0.3)
            return list(inbox.queues)

    assert run(scenario()) == ["default"]


def test_a_revoked_sessions_hear_nothing_more(url, tenancy):
    peer = factories.endpoint(tenancy.team, slug="peer", queues=("default", "other"))

    async def scenario():
        revoked_inbox, peer_inbox = Inbox(), Inbox()
        async with (
            mcp_client(url, tenancy.token, inbox=revoked_inbox) as worker,
            mcp_client(url, peer.token, inbox=peer_inbox) as control,
        ):
            await listening(worker, revoked_inbox, tenancy.agent)
            await listening(control, peer_inbox, factories.agent(peer))
            execute(endpoints.revoke(None, tenancy.worker.endpoint.id))
            announce(tenancy.worker.endpoint.id, "default")
            announce(peer.endpoint.id, "default")
            assert await peer_inbox.wait_for("default")
            await asyncio.sleep(QUIET)
            return list(revoked_inbox.queues)

    assert run(scenario()) == []


def test_after_a_listener_outage_every_session_is_told_to_look(url, tenancy):
    """Notifications sent while the server's LISTEN connection was down are gone: when it
    recovers, each session hears todo_ready for every queue in its scope."""

    async def scenario():
        inbox = Inbox()
        async with mcp_client(url, tenancy.token, inbox=inbox) as worker:
            await listening(worker, inbox, tenancy.agent)
            with connect() as conn:
                killed = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity "
                    "WHERE application_name = 'board-live-listener'"
                ).fetchone()["n"]
            assert killed >= 1
            both = await inbox.wait_for("default", timeout=15) and await inbox.wait_for("other", timeout=5)
            return both

    assert run(scenario()) is True

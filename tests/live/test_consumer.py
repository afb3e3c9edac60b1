"""The ``/ws/board/`` consumer end to end: session auth, team groups, real NOTIFY through the
process's listener, coalescing, recovery and membership changes."""

from __future__ import annotations

import asyncio

import pytest
from django.conf import settings
from django.test import override_settings

from tests import factories
from tests.factories import relayed
from tests.support.live import WS_PATH, application, board_socket, drain, next_message, poll, run, session_cookie
from todos.core.db import aconnect, aexecute
from todos.core.store import agent as agent_store
from todos.core.store import teams as team_store
from todos.live.listener import get_listener

# These tests count the changes a transition sends: statements built meanwhile leave out the
# endpoint's once-a-minute last-seen stamp (its own `seen` change).
pytestmark = pytest.mark.usefixtures("no_seen_stamps")


def changed_ids(messages) -> set:
    return {i for m in messages if m["type"] == "changed" for i in m["ids"]}


def test_anonymous_socket_is_closed_with_4401(store_db):
    async def scenario():
        from channels.testing import WebsocketCommunicator

        comm = WebsocketCommunicator(application(), WS_PATH, headers=[(b"origin", b"http://testserver")])
        connected, _ = await comm.connect(timeout=10)
        closed = await poll(comm, 5)
        await comm.wait(timeout=2)
        return connected, closed

    connected, closed = run(scenario)
    assert connected  # accepted so that the browser sees the code, then closed
    assert closed == {"type": "websocket.close", "code": 4401}


def test_a_forged_or_expired_session_is_anonymous(store_db):
    async def scenario():
        async with board_socket(None) as comm:
            pass
        from channels.testing import WebsocketCommunicator
        from django.conf import settings

        comm = WebsocketCommunicator(
            application(),
            WS_PATH,
            headers=[(b"origin", b"http://testserver"), (b"cookie", f"{settings.SESSION_COOKIE_NAME}=forged".encode())],
        )
        await comm.connect(timeout=10)
        return await poll(comm, 5)

    assert run(scenario) == {"type": "websocket.close", "code": 4401}


def test_a_deactivated_user_is_refused(store_db):
    user = factories.user()
    cookie = session_cookie(user)
    user.is_active = False
    user.save()

    async def scenario():
        from channels.testing import WebsocketCommunicator
        from django.conf import settings

        comm = WebsocketCommunicator(
            application(),
            WS_PATH,
            headers=[
                (b"origin", b"http://testserver"),
                (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
            ],
        )
        await comm.connect(timeout=10)
        return await poll(comm, 5)

    assert run(scenario) == {"type": "websocket.close", "code": 4401}


def test_a_foreign_origin_is_rejected(tenancy):
    async def scenario():
        from channels.testing import WebsocketCommunicator
        from django.conf import settings

        comm = WebsocketCommunicator(
            application(),
            WS_PATH,
            headers=[
                (b"origin", b"http://evil.example"),
                (b"cookie", f"{settings.SESSION_COOKIE_NAME}={tenancy.cookie_a}".encode()),
            ],
        )
        connected, _ = await comm.connect(timeout=10)
        return connected

    assert run(scenario) is False


def test_a_committed_transition_reaches_its_team_only(tenancy):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a, board_socket(tenancy.cookie_b) as b:
            created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="for team a"))
            got_a = await next_message(a)
            # team b's socket is idle: let a transition of its own team through to prove it listens
            other = await aexecute(agent_store.create(tenancy.agent_b, queue="default", title="for team b"))
            got_b = await next_message(b)
            rest_a = await drain(a, 0.5)
            return created.todo, other.todo, got_a, got_b, rest_a

    todo_a, todo_b, got_a, got_b, rest_a = run(scenario)
    assert got_a == {
        "type": "changed",
        "ids": [todo_a.id],
        "queues": ["default"],
        "ops": ["create"],
        "teams": [str(tenancy.team_a.id)],
    }
    assert got_b["ids"] == [todo_b.id] and got_b["teams"] == [str(tenancy.team_b.id)]
    assert todo_b.id not in changed_ids(rest_a)
    assert rest_a == []


def test_a_rolled_back_transition_sends_nothing(tenancy):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            conn = await aconnect(autocommit=False)
            try:
                doomed = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="never"), conn)
                await conn.rollback()
            finally:
                await conn.close()
            silent = await drain(a, 0.5)
            kept = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="kept"))
            got = await next_message(a)
            return doomed.todo.id, kept.todo.id, silent, got

    doomed, kept, silent, got = run(scenario)
    assert silent == []
    assert got["ids"] == [kept] and doomed not in got["ids"]


def test_a_burst_of_500_heartbeats_arrives_coalesced_and_ends_in_the_final_state(tenancy):
    async def scenario():
        created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="busy"))
        claim = await aexecute(agent_store.claim_next(tenancy.agent_a, require_fence=True))
        async with board_socket(tenancy.cookie_a, subscribe={"page": "todos", "filter": "", "todo": None}) as a:
            loop = asyncio.get_running_loop()
            # One connection, no fsync wait per commit: the burst is as dense as an agent fleet's.
            conn = await aconnect()
            await conn.execute("SET synchronous_commit TO off")
            started = loop.time()
            for _ in range(500):
                await aexecute(
                    agent_store.heartbeat(tenancy.agent_a, claim.todo.id, lease_token=claim.lease_token), conn
                )
            burst = loop.time() - started
            await conn.close()
            # then a final transition, which must be in the last message
            await aexecute(agent_store.complete(tenancy.agent_a, claim.todo.id, lease_token=claim.lease_token))
            messages = await drain(a, 1.0)
            return created.todo.id, burst, messages

    todo_id, burst, messages = run(scenario)
    changed = [m for m in messages if m["type"] == "changed"]
    print(f"500 heartbeats in {burst:.2f} s -> {len(changed)} messages")
    assert changed and all(m["ids"] == [todo_id] for m in changed)
    # one per coalescing window, the two saved-up tokens, and the final one
    window = settings.BOARD_LIVE_COALESCE_SECONDS
    assert len(changed) <= burst / window + 3
    assert len(changed) <= 25
    assert "complete" in changed[-1]["ops"]
    assert sum("heartbeat" in m["ops"] for m in changed) >= 1


def test_killing_the_listener_connection_is_recovered_and_clients_resync(tenancy, caplog):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            listener = get_listener()
            old_pid = listener.backend_pid
            assert old_pid is not None
            conn = await aconnect()
            await conn.execute("SELECT pg_terminate_backend(%s)", [old_pid])
            await conn.close()
            seen = []
            while not any(m["type"] == "resync" for m in seen):
                message = await poll(a, 10)
                assert message is not None, f"no resync; got {seen}"
                seen.append(message)
            # and the pipe works again, on a new connection
            created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="after"))
            after = await next_message(a)
            return old_pid, listener.backend_pid, seen, created.todo.id, after

    old_pid, new_pid, seen, todo_id, after = run(scenario)
    assert new_pid is not None and new_pid != old_pid
    assert seen[0] == {"type": "status", "state": "reconnecting"}
    assert {"type": "status", "state": "live"} in seen and seen[-1] == {"type": "resync"}
    assert after["ids"] == [todo_id]
    logs = [r.getMessage() for r in caplog.records if r.name == "todos.live.listener"]
    assert any("lost its connection" in m for m in logs) and any("recovered" in m for m in logs)


def test_a_human_removed_from_a_team_stops_receiving_within_seconds(tenancy):
    colleague = factories.user()
    factories.member(tenancy.team_a, colleague)
    colleague_cookie = session_cookie(colleague)

    async def scenario():
        # the setup's membership change relayed first, and any message of it still on the way read
        # off both sockets, so the first message each reads is the create's
        await asyncio.to_thread(relayed)
        async with board_socket(tenancy.cookie_a) as removed, board_socket(colleague_cookie) as stays:
            await drain(removed, 0.3)
            await drain(stays, 0.3)
            before = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="before"))
            assert (await next_message(removed))["ids"] == [before.todo.id]
            assert (await next_message(stays))["ids"] == [before.todo.id]
            loop = asyncio.get_running_loop()
            removed_at = loop.time()
            await aexecute(team_store.remove_member(None, team_id=tenancy.team_a.id, user_id=tenancy.user_a.id))
            resync = await next_message(removed)
            reacted = loop.time() - removed_at
            after = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="after"))
            colleague_got = await drain(stays, 0.5)
            removed_got = await drain(removed, 0.5)
            return resync, reacted, after.todo.id, colleague_got, removed_got

    resync, reacted, after_id, colleague_got, removed_got = run(scenario)
    # the page re-fetches and loses what it may no longer see, saying why once
    assert resync == {"type": "resync", "left_team": True}
    assert reacted < 2.0
    assert after_id in changed_ids(colleague_got)  # the team's other member still receives…
    assert "membership" in {op for m in colleague_got for op in m.get("ops", ())}
    assert removed_got == []  # …the removed one receives nothing more


@override_settings(BOARD_LIVE_RECHECK_SECONDS=0.3)
def test_the_periodic_recheck_catches_a_membership_change_without_notification(tenancy):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            conn = await aconnect()
            # a change made behind the store's back (no NOTIFY): only the backstop can see it
            await conn.execute("DELETE FROM team_members WHERE user_id = %s", [tenancy.user_a.id])
            await conn.close()
            resync = await next_message(a, timeout=3)
            after = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="after"))
            return resync, after.todo.id, await drain(a, 0.5)

    resync, after_id, rest = run(scenario)
    assert resync == {"type": "resync", "left_team": True}  # lost a team: the page says so once
    assert rest == []


@override_settings(BOARD_LIVE_RECHECK_SECONDS=0.3)
def test_a_human_added_to_a_team_starts_receiving(tenancy):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            await aexecute(
                team_store.set_member(None, team_id=tenancy.team_b.id, user_id=tenancy.user_a.id, role="viewer")
            )
            resync = await next_message(a, timeout=3)
            created = await aexecute(agent_store.create(tenancy.agent_b, queue="default", title="team b"))
            got = await next_message(a)
            while got.get("type") == "changed" and not got["ids"]:
                got = await next_message(a)  # the membership change itself, announced to the team
            return resync, created.todo.id, got

    resync, todo_id, got = run(scenario)
    assert resync == {"type": "resync"}
    assert got["ids"] == [todo_id] and got["teams"] == [str(tenancy.team_b.id)]


def test_a_deactivated_account_is_disconnected_by_the_recheck(tenancy):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            conn = await aconnect()
            await conn.execute("UPDATE auth_user SET is_active = false WHERE id = %s", [tenancy.user_a.id])
            await conn.close()
            # a membership notification for one of its teams triggers the re-check at once
            await aexecute(
                team_store.set_member(None, team_id=tenancy.team_a.id, user_id=tenancy.user_b.id, role="viewer")
            )
            return await next_message(a, timeout=3)

    assert run(scenario) == {"type": "websocket.close", "code": 4401}


def test_a_person_a_site_admin_deactivates_is_disconnected_at_once(tenancy):
    """``set_active`` writes a membership change per team of the person: their sockets re-check
    and close without waiting for the periodic backstop."""
    from todos.core.store import people as people_store

    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            loop = asyncio.get_running_loop()
            started = loop.time()
            await aexecute(people_store.set_active(None, user_id=tenancy.user_a.id, active=False))
            closed = await next_message(a, timeout=3)
            return closed, loop.time() - started

    closed, took = run(scenario)
    assert closed == {"type": "websocket.close", "code": 4401}
    assert took < 2.0


def test_a_membership_notification_naming_the_human_reaches_them_outside_the_team(tenancy):
    """The human's own group: a notification that names them triggers an immediate re-check even
    for a team whose group they have not joined (the periodic re-check is 10 s away)."""

    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            conn = await aconnect()
            await conn.execute(
                "INSERT INTO team_members (team_id, user_id, role) VALUES (%s, %s, 'viewer')",
                [tenancy.team_b.id, tenancy.user_a.id],
            )
            await conn.execute(
                "SELECT pg_notify('board_events', json_build_object('op', 'membership', 'team', %s::text, "
                "'ids', '[]'::json, 'queues', '[]'::json, 'endpoints', '[]'::json, 'user', %s::int)::text)",
                [str(tenancy.team_b.id), tenancy.user_a.id],
            )
            await conn.close()
            return await next_message(a, timeout=2)

    assert run(scenario) == {"type": "resync"}


async def after_the_creates(comm) -> dict:
    """The next message that is not the creates' (made before the socket, they reach it whenever
    the relay and the listener get to them; one queued before the subscription was decided
    without it)."""
    while (message := await next_message(comm))["ops"] == ["create"]:
        pass
    return message


def test_the_subscription_skips_what_the_page_cannot_show(tenancy):
    async def scenario():
        one = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="open in the drawer"))
        two = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="another"))
        drawer = {"page": "drawer", "filter": "", "todo": one.todo.id}
        teams = {"page": "teams", "filter": "", "todo": None}
        other_queue = {"page": "todos", "filter": "queue=elsewhere&state=pending", "todo": None}
        async with (
            board_socket(tenancy.cookie_a, subscribe=drawer) as d,
            board_socket(tenancy.cookie_a, subscribe=teams) as t,
            board_socket(tenancy.cookie_a, subscribe=other_queue) as q,
        ):
            await aexecute(agent_store.claim(tenancy.agent_a, two.todo.id))
            await asyncio.to_thread(relayed)  # its own relay pass: one notification per claim
            await aexecute(agent_store.claim(tenancy.agent_a, one.todo.id))
            got_d = await after_the_creates(d)
            await aexecute(
                team_store.set_member(None, team_id=tenancy.team_a.id, user_id=tenancy.user_b.id, role="viewer")
            )
            got_t = await next_message(t)
            rest_d = [m for m in await drain(d, 0.3) if m["ops"] != ["create"]]
            return one.todo.id, got_d, got_t, rest_d, await drain(q, 0.3)

    one_id, got_d, got_t, rest_d, got_q = run(scenario)
    assert got_d["ids"] == [one_id] and got_d["ops"] == ["claim"]  # only the open todo's change
    assert got_t["ops"] == ["membership"] and got_t["ids"] == []  # the teams page: members only
    assert rest_d == []  # not the other todo, not the membership change
    assert got_q == []  # a list filtered to another queue


def test_a_todo_page_gets_only_its_todo_from_one_relay_pass_holding_several(tenancy):
    async def scenario():
        one = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="open in the drawer"))
        two = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="another"))
        drawer = {"page": "drawer", "filter": "", "todo": one.todo.id}
        async with board_socket(tenancy.cookie_a, subscribe=drawer) as d:
            await aexecute(agent_store.claim(tenancy.agent_a, two.todo.id))
            await aexecute(agent_store.claim(tenancy.agent_a, one.todo.id))
            await asyncio.to_thread(relayed)  # both claims in one pass, one merged notification
            return one.todo.id, await after_the_creates(d), await drain(d, 0.3)

    one_id, got, rest = run(scenario)
    assert got["ids"] == [one_id] and got["ops"] == ["claim"]
    assert [m for m in rest if m["ops"] != ["create"]] == []


def test_a_schedules_page_hears_of_its_teams_schedule_changes_only(tenancy):
    from datetime import UTC, datetime

    from todos.core.store import schedules as schedule_store

    def schedule(team, agent, name):
        return schedule_store.create(
            None,
            team.id,
            now=datetime.now(UTC),
            endpoint_id=agent.endpoint_id,
            name=name,
            cron="0 * * * *",
            timezone="UTC",
            queue="default",
            title="nightly",
            kind=None,
            payload=None,
            priority=0,
            max_attempts=3,
        )

    async def scenario():
        page = {"page": "schedules", "filter": "", "todo": None}
        async with board_socket(tenancy.cookie_a, subscribe=page) as a:
            await aexecute(schedule(tenancy.team_b, tenancy.agent_b, "theirs"))
            made = await aexecute(schedule(tenancy.team_a, tenancy.agent_a, "ours"))
            got = await next_message(a)
            await aexecute(schedule_store.set_paused(None, made.id, True, now=datetime.now(UTC)))
            return got, await next_message(a), await drain(a, 0.3)

    created, paused, rest = run(scenario)
    assert created["ops"] == ["schedule"] and created["teams"] == [str(tenancy.team_a.id)]
    assert paused["ops"] == ["schedule"]
    assert rest == []  # team b's schedule never reached team a's page


def test_bad_client_messages_get_an_error_and_the_socket_keeps_working(tenancy):
    async def scenario():
        replies = []
        async with board_socket(tenancy.cookie_a) as a:
            for bad in (
                "not json",
                '["subscribe"]',
                '{"hello": 1}',
                '{"subscribe": {"page": 5}}',
                '{"subscribe": {"page": "todos", "todo": true}}',
                '{"subscribe": {"page": "todos", "filter": 7}}',
                '{"subscribe": "todos"}',
                "x" * 5000,
            ):
                await a.send_to(text_data=bad)
                replies.append(await next_message(a))
            await a.send_to(bytes_data=b"\x00")
            replies.append(await next_message(a))
            await a.send_json_to({"subscribe": {"page": "todos", "filter": "", "todo": None}})
            ack = await next_message(a)
            created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="still live"))
            return replies, ack, created.todo.id, await next_message(a)

    replies, ack, todo_id, got = run(scenario)
    assert [r["type"] for r in replies] == ["error"] * 9
    assert ack == {"type": "subscribed", "page": "todos", "todo": None}
    assert got["ids"] == [todo_id]


def test_malformed_notifications_are_ignored_and_the_listener_carries_on(tenancy, caplog):
    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            conn = await aconnect()
            for payload in (
                "garbage",
                "[1, 2]",
                '{"op": "create"}',
                '{"team": "not-a-uuid", "op": "create"}',
                f'{{"team": "{tenancy.team_a.id}"}}',
            ):
                await conn.execute("SELECT pg_notify('board_events', %s)", [payload])
            await conn.close()
            created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="fine"))
            return created.todo.id, await next_message(a)

    todo_id, got = run(scenario)
    assert got["ids"] == [todo_id]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 5


def test_a_statement_touching_hundreds_of_todos_arrives_as_an_overflow(tenancy):
    async def scenario():
        conn = await aconnect()
        await conn.execute("SET synchronous_commit TO off")
        for i in range(260):
            await aexecute(agent_store.create(tenancy.agent_a, queue="default", title=f"t{i}"), conn)
        for _ in range(3):
            await aexecute(agent_store.claim_batch(tenancy.agent_a, max=100), conn)
        await conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE state = 'claimed'")
        # the setup's claims relayed first, and any of their messages still on the way read off
        # the socket, so what follows the reap is the reap's alone
        await asyncio.to_thread(relayed)
        async with board_socket(tenancy.cookie_a) as a:
            from todos.core.store import background as background_store

            await drain(a, 0.3)
            reaped = await aexecute(background_store.reap(), conn)
            await conn.close()
            return reaped, await drain(a, 0.6)

    reaped, messages = run(scenario)
    assert reaped.count == 260
    # Usually one message; two when the statement's six notifications straddle two flushes.
    assert 1 <= len(messages) <= 2 and all(m["ops"] == ["reap"] for m in messages)
    assert all(m["queues"] == ["default"] and m["teams"] == [str(tenancy.team_a.id)] for m in messages)
    overflowed = [m for m in messages if m.get("overflow")]
    # The page learns of every change: an overflow ("refresh everything you show", no ids), or
    # (when the notifications split into flushes of at most 200 ids each) every id.
    if overflowed:
        assert overflowed[0]["ids"] == []
    else:
        assert sorted(i for m in messages for i in m["ids"]) == sorted(reaped.ids)


@override_settings(BOARD_LIVE_RECHECK_SECONDS=0.3)
def test_the_periodic_recheck_rejoins_groups_the_layer_forgot(tenancy):
    """The in-memory layer silently drops a group member after ``group_expiry`` (a day); Board
    tabs stay open longer, so the re-check joins the groups again."""
    from channels.layers import get_channel_layer

    from todos.live.groups import team_group

    async def scenario():
        async with board_socket(tenancy.cookie_a) as a:
            layer = get_channel_layer()
            group = team_group(tenancy.team_a.id)
            (channel,) = list(layer.groups[group])
            await layer.group_discard(group, channel)  # what expiry does
            await asyncio.sleep(0.6)
            created = await aexecute(agent_store.create(tenancy.agent_a, queue="default", title="still here"))
            return created.todo.id, await next_message(a)

    todo_id, got = run(scenario)
    assert got["ids"] == [todo_id]

"""Live notifications: each committed statement reaches ``board_events`` once, through the change
log and the relay (ids and small fields, never a payload); a rolled-back one records and sends
nothing; ``board_ready`` when work becomes claimable, straight from the statement."""

from __future__ import annotations

import json

import pytest

from tests.store.helpers import lapse, listening, make_due
from todos.core import db
from todos.core.db import execute
from todos.core.store import StoreError
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("no_seen_stamps")

SECRET = "do-not-broadcast-me"


def new(agent, **kw) -> str:
    return execute(agent_store.create(agent, queue="default", title="t", payload={"token": SECRET}, **kw)).todo.id


def board_events(listener):
    return [payload for channel, payload in listener.drain() if channel == "board_events"]


def test_a_committed_transition_notifies_once_with_ids_and_no_payload(world):
    agent = world.agent
    todo_id = new(agent)
    with listening("board_events") as listener:
        execute(agent_store.claim(agent, todo_id))
        [event] = board_events(listener)
    assert event["op"] == "claim" and event["ids"] == [todo_id]
    assert event["team"] == str(world.team.id)
    assert event["queues"] == ["default"] and event["endpoints"] == [str(agent.endpoint_id)]
    assert "payload" not in event and SECRET not in str(event)


TRANSITIONS = [
    (
        "create",
        lambda w, i: execute(agent_store.create(w.agent, queue="default", title="x", payload={"token": SECRET})),
    ),
    (
        "heartbeat",
        lambda w, i: (execute(agent_store.claim(w.agent, i)), execute(agent_store.heartbeat(w.agent, i)))[-1],
    ),
    (
        "complete",
        lambda w, i: (
            execute(agent_store.claim(w.agent, i)),
            execute(agent_store.complete(w.agent, i, result={"token": SECRET})),
        )[-1],
    ),
    ("fail", lambda w, i: (execute(agent_store.claim(w.agent, i)), execute(agent_store.fail(w.agent, i)))[-1]),
    ("release", lambda w, i: (execute(agent_store.claim(w.agent, i)), execute(agent_store.release(w.agent, i)))[-1]),
    ("cancel", lambda w, i: execute(human_store.cancel(w.human, i))),
    ("assign", lambda w, i: execute(human_store.assign(w.human, i, w.human.owner))),
]


def test_each_transition_notifies_exactly_once(world, subtests):
    for op, act in TRANSITIONS:
        with subtests.test(op=op):
            todo_id = new(world.agent)
            with listening("board_events") as listener:
                act(world, todo_id)
                events = board_events(listener)
            assert [e["op"] for e in events][-1] == op
            assert sum(1 for e in events if e["op"] == op) == 1
            assert all(SECRET not in str(e) for e in events)


def test_a_refused_transition_notifies_nobody(world):
    todo_id = new(world.agent)
    with listening("board_events", "board_ready") as listener:
        for stmt in (
            agent_store.complete(world.agent, todo_id),
            human_store.retry(world.human, todo_id),
            agent_store.claim(world.foreign_agent, todo_id),
        ):
            with pytest.raises(StoreError):
                execute(stmt)
        assert execute(background_store.reap()).count == 0
        assert listener.drain() == []


def test_a_rolled_back_transition_notifies_nobody(world):
    todo_id = new(world.agent)
    stmt = agent_store.claim(world.agent, todo_id)
    with listening("board_events", "board_ready") as listener:
        with db.connect(autocommit=False) as conn:
            claim = execute(stmt, conn)
            assert claim.todo.state == "claimed"
            conn.rollback()
        assert listener.drain() == []
        # the same statement committed does notify
        with db.connect(autocommit=False) as conn:
            execute(stmt, conn)
            assert listener.drain(timeout=0.2) == []  # not before COMMIT
            conn.commit()
        assert [p["op"] for _, p in listener.drain()] == ["claim"]


def test_a_multi_row_statement_sends_one_notification_per_chunk(agent):
    ids = [new(agent) for _ in range(120)]
    with listening("board_events") as listener:
        execute(agent_store.claim_batch(agent, max=100))
        events = board_events(listener)
    assert len(events) == 4  # chunks of at most NOTIFY_CHUNK (25) ids
    notified = [i for e in events for i in e["ids"]]
    assert sorted(notified) == sorted(ids[:100]) and len(notified) == len(set(notified))
    with listening("board_events") as listener:
        execute(agent_store.claim_batch(agent, max=5))
        assert [len(e["ids"]) for e in board_events(listener)] == [5]


def test_a_sweep_touching_two_teams_notifies_each_team(world):
    mine = new(world.agent)
    theirs = new(world.foreign_agent)
    execute(agent_store.claim(world.agent, mine))
    execute(agent_store.claim(world.foreign_agent, theirs))
    lapse(mine)
    lapse(theirs)
    with listening("board_events") as listener:
        execute(background_store.reap())
        events = board_events(listener)
    assert sorted((e["team"], tuple(e["ids"])) for e in events) == sorted(
        [(str(world.team.id), (mine,)), (str(world.foreign_team.id), (theirs,))]
    )


def ready(listener):
    return [payload for channel, payload in listener.drain() if channel == "board_ready"]


def test_board_ready_wakes_agents_when_work_becomes_claimable(world):
    agent = world.agent
    wake = {"endpoint": str(agent.endpoint_id), "queue": "default", "n": 1}
    with listening("board_ready") as listener:
        todo_id = new(agent)
        assert ready(listener) == [wake]  # create

        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.heartbeat(agent, todo_id))
        assert ready(listener) == []  # a claim or heartbeat makes nothing claimable
        execute(agent_store.release(agent, todo_id))
        assert ready(listener) == [wake]  # release

        execute(agent_store.claim(agent, todo_id))
        lapse(todo_id)
        execute(background_store.reap())
        assert ready(listener) == [wake]  # reap to pending

        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.fail(agent, todo_id))
        assert ready(listener) == []
        execute(human_store.retry(world.human, todo_id))
        assert ready(listener) == [wake]  # operator retry

        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.fail(agent, todo_id))
        make_due(todo_id)
        execute(background_store.requeue_due_retries())
        assert ready(listener) == [wake]  # due retry requeued


def test_board_ready_says_how_many_todos_became_claimable(agent):
    """One sweep that frees three todos of a queue sends one notification with n=3, so a process
    wakes three waiting claims (and not every waiter of the endpoint)."""
    ids = [new(agent) for _ in range(3)]
    for todo_id in ids:
        execute(agent_store.claim(agent, todo_id))
        lapse(todo_id)
    with listening("board_ready") as listener:
        execute(background_store.reap())
        assert ready(listener) == [{"endpoint": str(agent.endpoint_id), "queue": "default", "n": 3}]


def test_reaping_into_a_dead_letter_wakes_no_agent(agent):
    todo_id = new(agent, max_attempts=1)
    execute(agent_store.claim(agent, todo_id))
    lapse(todo_id)
    with listening("board_ready", "board_events") as listener:
        execute(background_store.reap())
        got = listener.drain()
    assert [c for c, _ in got] == ["board_events"]


def test_a_duplicate_create_notifies_nobody(agent):
    new(agent, idempotency_key="k")
    with listening("board_events", "board_ready") as listener:
        assert execute(agent_store.create(agent, queue="default", title="t", idempotency_key="k")).created is False
        assert listener.drain() == []


def test_notifications_are_small(agent):
    ids = [new(agent) for _ in range(60)]
    with listening("board_events") as listener:
        execute(agent_store.claim_batch(agent, max=60))
        got = listener.drain()
    for _, payload in got:
        assert len(json.dumps(payload).encode()) < 8000
    assert sorted(i for _, p in got for i in p["ids"]) == sorted(ids)

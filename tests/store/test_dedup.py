"""Idempotent enqueue: one live todo per (endpoint, idempotency key)."""

from __future__ import annotations

import pytest

from tests.store.helpers import counts, make_due, row, run_threads, sql
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def create(agent, key="k-1", **kw):
    kw.setdefault("queue", "default")
    kw.setdefault("title", "from a webhook")
    return execute(agent_store.create(agent, idempotency_key=key, **kw))


def test_duplicates_collapse_into_the_first_todo(agent):
    first = create(agent, payload={"delivery": 1})
    second = create(agent, payload={"delivery": 2}, title="another title")
    assert first.created is True and second.created is False
    assert second.todo.id == first.todo.id
    assert second.todo.payload == {"delivery": 1}  # the live todo, untouched
    assert counts()["todos"] == 1


def test_keys_are_per_endpoint(world):
    a = create(world.agent)
    b = create(world.sibling)
    assert a.created and b.created and a.todo.id != b.todo.id


@pytest.mark.parametrize("state", ["pending", "claimed", "retry_scheduled"])
def test_a_live_todo_covers_its_key(agent, state):
    first = create(agent)
    if state != "pending":
        execute(agent_store.claim(agent, first.todo.id))
    if state == "retry_scheduled":
        execute(agent_store.fail(agent, first.todo.id))
        assert row(first.todo.id)["next_retry_at"] is not None
    again = create(agent)
    assert not again.created and again.todo.id == first.todo.id


@pytest.mark.parametrize("ending", ["done", "dead_letter"])
def test_a_finished_todo_no_longer_covers_its_key(agent, ending):
    first = create(agent, max_attempts=1)
    execute(agent_store.claim(agent, first.todo.id))
    if ending == "done":
        execute(agent_store.complete(agent, first.todo.id))
    else:
        execute(agent_store.fail(agent, first.todo.id))
        assert row(first.todo.id)["next_retry_at"] is None
    again = create(agent)
    assert again.created and again.todo.id != first.todo.id
    assert create(agent).todo.id == again.todo.id


def test_concurrent_creates_with_one_key_make_exactly_one_todo(agent):
    """Eight producers deliver the same event at once: one todo, seven ``created=False`` answers
    naming it. Run a few rounds: the interesting interleaving (the winner commits after a loser's
    snapshot) does not happen every time."""
    for round_ in range(5):
        key = f"event-{round_}"

        def work(i, barrier, key=key):
            with db.connect() as conn:
                stmt = agent_store.create(agent, queue="default", title=f"from producer {i}", idempotency_key=key)
                barrier.wait()
                return execute(stmt, conn)

        outcomes = run_threads(8, work)
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert errors == []
        assert sum(o.created for o in outcomes) == 1
        assert len({o.todo.id for o in outcomes}) == 1
        assert sql("SELECT count(*) AS n FROM todos WHERE idempotency_key = %s", (key,))[0]["n"] == 1


def test_retrying_a_dead_letter_whose_key_was_reused_is_a_conflict(world):
    """The dead letter gave up its key; a new todo took it. Bringing the dead letter back would
    put two live todos on one key, so retry refuses (and a bulk retry skips it)."""
    agent = world.agent
    dead = create(agent, max_attempts=1).todo.id
    execute(agent_store.claim(agent, dead))
    execute(agent_store.fail(agent, dead))
    fresh = create(agent)
    assert fresh.created
    before = row(dead)
    with pytest.raises(Conflict):
        execute(human_store.retry(world.human, dead))
    assert row(dead) == before
    out = execute(human_store.retry_many(world.human, [dead]))
    assert out.changed == () and out.skipped == (dead,)
    # once the new todo is done, the key is free again and the retry goes through
    execute(agent_store.claim(agent, fresh.todo.id))
    execute(agent_store.complete(agent, fresh.todo.id))
    assert execute(human_store.retry(world.human, dead)).state == "pending"


def test_a_due_retry_keeps_its_key_through_requeue(agent):
    from todos.core.store import background as background_store

    first = create(agent)
    execute(agent_store.claim(agent, first.todo.id))
    execute(agent_store.fail(agent, first.todo.id))
    make_due(first.todo.id)
    assert execute(background_store.requeue_due_retries()).ids == (first.todo.id,)
    assert create(agent).todo.id == first.todo.id

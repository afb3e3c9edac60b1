"""Dependencies under concurrency, with real connections: parents finishing at once unblock their
child exactly once, and a create racing its parent's completion loses no wake-up either way."""

from __future__ import annotations

import logging

from tests.store.helpers import behind, row, run_threads
from todos.core.db import execute
from todos.core.store import agent as agent_store

PARENTS = 8
ROUNDS = 20


def test_eight_parents_completed_at_once_unblock_the_child_exactly_once(agent):
    for round_no in range(ROUNDS):
        parents = [
            execute(agent_store.create(agent, queue="default", title=f"p{round_no}.{n}")).todo for n in range(PARENTS)
        ]
        claims = execute(agent_store.claim_batch(agent, max=PARENTS))
        assert sorted(c.todo.id for c in claims) == sorted(p.id for p in parents)
        child = execute(
            agent_store.create(agent, queue="default", title=f"child{round_no}", after=[p.id for p in parents])
        ).todo
        assert child.blocked

        def complete(i, barrier, ids=tuple(p.id for p in parents)):
            barrier.wait()
            return execute(agent_store.complete(agent, ids[i]))

        outcomes = run_threads(PARENTS, complete)
        assert all(getattr(o, "state", None) == "done" for o in outcomes), outcomes
        assert row(child.id)["parents_left"] == 0
        claimed = execute(agent_store.claim_next(agent))
        assert claimed is not None and claimed.todo.id == child.id, round_no
        assert execute(agent_store.claim_next(agent)) is None
        execute(agent_store.complete(agent, child.id))


def test_a_completion_waiting_behind_a_create_of_its_child_unblocks_it(agent):
    parent = execute(agent_store.create(agent, queue="default", title="p")).todo
    execute(agent_store.claim(agent, parent.id))
    created, completed = behind(
        agent_store.create(agent, queue="default", title="child", after=[parent.id]),
        agent_store.complete(agent, parent.id),
    )
    assert created.todo.blocked and completed.state == "done"
    assert row(created.todo.id)["next_retry_at"] is None and row(created.todo.id)["parents_left"] == 0
    assert execute(agent_store.claim_next(agent)).todo.id == created.todo.id


def test_a_completion_waiting_behind_a_batch_naming_its_todo_unblocks_the_item(agent):
    parent = execute(agent_store.create(agent, queue="default", title="p")).todo
    execute(agent_store.claim(agent, parent.id))
    created, completed = behind(
        agent_store.create_batch(agent, [{"queue": "default", "title": "child", "after": [parent.id]}]),
        agent_store.complete(agent, parent.id),
    )
    child = created[0].todo
    assert child.blocked and completed.state == "done"
    assert row(child.id)["next_retry_at"] is None and row(child.id)["parents_left"] == 0
    assert execute(agent_store.claim_next(agent)).todo.id == child.id


def test_children_of_one_parent_created_at_once_all_wait_and_all_unblock(agent, caplog):
    """Creates naming one parent take its row lock in turn (``FOR NO KEY UPDATE``, strong enough for
    the first to mark it ``has_children`` without upgrading a shared lock, so none deadlocks: the
    store would run a deadlock's victim again, and say so), and the parent's complete unblocks
    every child."""
    caplog.set_level(logging.INFO, logger="todos.core.db")
    for round_no in range(ROUNDS // 4):
        parent = execute(agent_store.create(agent, queue="default", title=f"p{round_no}")).todo

        def create(i, barrier, parent_id=parent.id):
            barrier.wait()
            return execute(agent_store.create(agent, queue="default", title=f"c{i}", after=[parent_id]))

        outcomes = run_threads(PARENTS, create)
        assert all(getattr(o, "created", False) and o.todo.blocked for o in outcomes), outcomes
        assert row(parent.id)["has_children"]
        execute(agent_store.claim(agent, parent.id))
        execute(agent_store.complete(agent, parent.id))
        claimed = [execute(agent_store.claim_next(agent)).todo.id for _ in range(PARENTS)]
        assert sorted(claimed) == sorted(o.todo.id for o in outcomes), round_no
        for child_id in claimed:
            execute(agent_store.complete(agent, child_id))
    assert not [r.getMessage() for r in caplog.records if "deadlock" in r.getMessage()]


def test_a_create_waiting_behind_its_parent_s_completion_is_not_blocked(agent):
    parent = execute(agent_store.create(agent, queue="default", title="p")).todo
    execute(agent_store.claim(agent, parent.id))
    completed, created = behind(
        agent_store.complete(agent, parent.id),
        agent_store.create(agent, queue="default", title="child", after=[parent.id]),
    )
    assert completed.state == "done"
    assert not created.todo.blocked and created.todo.parents_left == 0


def test_a_create_waiting_behind_its_parent_s_death_is_refused_or_runs(agent):
    parent = execute(agent_store.create(agent, queue="default", title="p", max_attempts=1)).todo
    execute(agent_store.claim(agent, parent.id))
    _, refused = behind(
        agent_store.fail(agent, parent.id),
        agent_store.create(agent, queue="default", title="child", after=[parent.id]),
    )
    assert getattr(refused, "field", None) == "after[0]", refused

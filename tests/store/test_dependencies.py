"""Dependencies: a todo created ``after`` others is blocked (pending, scheduled for never) until
they are done; the statement that finishes the last one unblocks it; a parent that dies or is
canceled cancels its ``cancel`` children (recursively) and stops counting for its ``run`` ones."""

from __future__ import annotations

import pytest

from tests.factories import relayed
from tests.store.helpers import audit, counts, dependency_writes, lapse, listening, row, sql
from todos.core.db import execute
from todos.core.store import Conflict, Invalid
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store
from todos.core.store import waiting as waiting_store

from .test_run_later import board_counts, later


def make(agent, title="t", **fields):
    return execute(agent_store.create(agent, queue="default", title=title, **fields)).todo


def finish(agent, todo_id):
    claim = execute(agent_store.claim(agent, todo_id))
    return execute(agent_store.complete(agent, claim.todo.id))


def kill(agent, todo_id):
    """Dead-letter a todo: claimed and failed on its last attempt."""
    execute(agent_store.claim(agent, todo_id))
    return execute(agent_store.fail(agent, todo_id))


def state(todo_id) -> str:
    return sql("SELECT todo_board_state(state, next_retry_at) AS s FROM todos WHERE id = %s", (todo_id,))[0]["s"]


def test_a_child_is_blocked_until_its_parents_are_done_and_no_claim_sees_it(agent):
    a, b = make(agent, "a"), make(agent, "b")
    child = make(agent, "child", after=[a.id, b.id])
    assert child.blocked and not child.scheduled and child.parents_left == 2
    assert child.on_parent_failure == "cancel"
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, child.id))
    finish(agent, a.id)
    assert state(child.id) == "blocked" and row(child.id)["parents_left"] == 1
    assert execute(agent_store.claim_next(agent)).todo.id == b.id
    with listening("board_ready") as listener:
        execute(agent_store.complete(agent, b.id))
        woken = [p for channel, p in listener.drain() if channel == "board_ready"]
    assert woken == [{"endpoint": str(agent.endpoint_id), "queue": "default", "n": 1}]
    assert state(child.id) == "pending" and row(child.id)["parents_left"] == 0
    assert execute(agent_store.claim_next(agent)).todo.id == child.id
    assert board_counts(agent.endpoint_id) == {"claimed": 1, "done": 2}


def test_a_done_parent_does_not_block_and_repeats_are_dropped(agent):
    a = make(agent, "a")
    finish(agent, a.id)
    child = make(agent, "child", after=[a.id, a.id])
    assert not child.blocked and child.parents_left == 0 and child.next_retry_at is None
    assert sql("SELECT settled FROM todo_dependencies WHERE child_id = %s", (child.id,)) == [{"settled": True}]


def test_the_child_s_own_run_at_waits_aside_and_comes_back_when_it_unblocks(agent):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id], run_at=later())
    assert child.blocked and row(child.id)["run_at_after_block"] is not None
    finish(agent, a.id)
    assert state(child.id) == "scheduled"
    assert row(child.id)["run_at_after_block"] is None


def test_the_requeue_loop_and_run_now_leave_a_blocked_todo_alone(agent, human):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id])
    execute(background_store.requeue_due_retries())
    assert state(child.id) == "blocked"
    with pytest.raises(Conflict):
        execute(waiting_store.run_now(human, child.id))
    assert state(child.id) == "blocked"


def test_complete_batch_and_an_operator_s_complete_unblock_too(agent, human):
    a, b = make(agent, "a"), make(agent, "b")
    child = make(agent, "child", after=[a.id, b.id])
    execute(agent_store.claim(agent, a.id))
    execute(agent_store.claim(agent, b.id))
    execute(agent_store.complete_batch(agent, [{"id": a.id}, {"id": b.id}]))
    assert state(child.id) == "pending"
    c = make(agent, "c")
    grandchild = make(agent, "g", after=[c.id])
    execute(human_store.claim(human, c.id))
    execute(human_store.complete(human, c.id))
    assert state(grandchild.id) == "pending"


def test_a_dead_parent_cancels_its_cancel_children_recursively_and_counts_off_run_children(agent):
    parent = make(agent, "p", max_attempts=1)
    other = make(agent, "other")
    doomed = make(agent, "doomed", after=[parent.id])
    doomed_grandchild = make(agent, "gc", after=[doomed.id])
    runner = make(agent, "runner", after=[parent.id, other.id], on_parent_failure="run")
    runner_of_doomed = make(agent, "rod", after=[doomed.id], on_parent_failure="run")
    kill(agent, parent.id)
    assert state(parent.id) == "dead"
    assert state(doomed.id) == "canceled" and row(doomed.id)["result"] == {
        "error": "parent_failed",
        "parent": parent.id,
    }
    assert state(doomed_grandchild.id) == "canceled"
    assert row(doomed_grandchild.id)["result"]["parent"] == doomed.id
    assert state(runner.id) == "blocked" and row(runner.id)["parents_left"] == 1
    assert state(runner_of_doomed.id) == "pending"
    finish(agent, other.id)
    assert state(runner.id) == "pending"
    relayed()
    logged = sql("SELECT op, state_before, state_after FROM change_log WHERE todo_id = %s", (doomed.id,))
    assert logged == []  # relayed: the counts below include it
    assert board_counts(agent.endpoint_id) == {"canceled": 2, "dead": 1, "done": 1, "pending": 2}


def test_a_retried_dead_parent_is_not_counted_off_twice(agent, human):
    parent = make(agent, "p", max_attempts=1)
    other = make(agent, "other")
    runner = make(agent, "runner", after=[parent.id, other.id], on_parent_failure="run")
    kill(agent, parent.id)
    execute(human_store.retry(human, parent.id))
    finish(agent, parent.id)
    assert state(runner.id) == "blocked" and row(runner.id)["parents_left"] == 1


def test_an_operator_s_cancel_and_bulk_cancel_cascade(agent, human):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id])
    execute(human_store.cancel(human, a.id))
    assert state(child.id) == "canceled"
    b, c = make(agent, "b"), make(agent, "c")
    kids = [make(agent, "k1", after=[b.id]), make(agent, "k2", after=[c.id], on_parent_failure="run")]
    execute(human_store.cancel_many(human, [b.id, c.id]))
    assert [state(k.id) for k in kids] == ["canceled", "pending"]


def test_canceling_a_parent_and_its_child_together_writes_each_once(agent, human):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id])
    outcome = execute(human_store.cancel_many(human, [a.id, child.id]))
    assert state(child.id) == "canceled" and state(a.id) == "canceled"
    assert outcome is not None


def test_the_reaper_s_dead_letter_cascades(agent):
    parent = make(agent, "p", max_attempts=1)
    child = make(agent, "child", after=[parent.id])
    execute(agent_store.claim(agent, parent.id))
    lapse(parent.id)
    execute(background_store.reap())
    assert state(parent.id) == "dead" and state(child.id) == "canceled"


def test_revoking_the_parent_s_endpoint_cascades_to_another_endpoint_s_children(world):
    parent = make(world.sibling, "p")
    child = make(world.agent, "child", after=[parent.id], on_parent_failure="run")
    doomed = make(world.agent, "doomed", after=[parent.id])
    execute(endpoint_store.revoke(world.admin, world.sibling.endpoint_id))
    assert state(parent.id) == "dead"
    assert state(child.id) == "pending" and state(doomed.id) == "canceled"


def test_revoking_an_endpoint_with_a_parent_and_its_child_dead_letters_both(world):
    parent = make(world.agent, "p")
    child = make(world.agent, "child", after=[parent.id])
    execute(endpoint_store.revoke(world.admin, world.agent.endpoint_id))
    assert state(parent.id) == "dead" and state(child.id) == "dead"


# --- refusals: each names the field, and nothing is written ---------------------------------


def refused(agent, field, **fields):
    before = counts(), dependency_writes()
    with pytest.raises(Invalid) as exc:
        make(agent, "child", **fields)
    assert exc.value.field == field, exc.value
    assert (counts(), dependency_writes()) == before
    return exc.value


def test_an_unknown_id_or_another_team_s_todo_is_refused_naming_its_index(world):
    mine = make(world.agent, "mine")
    theirs = make(world.foreign_agent, "theirs")
    refused(world.agent, "after[1]", after=[mine.id, "td_nope"])
    error = refused(world.agent, "after[1]", after=[mine.id, theirs.id])
    assert "no such todo" in error.problem


def test_a_dead_or_canceled_parent_is_refused_for_a_cancel_child_and_not_counted_for_a_run_child(agent, human):
    dead = make(agent, "dead", max_attempts=1)
    kill(agent, dead.id)
    gone = make(agent, "gone")
    execute(human_store.cancel(human, gone.id))
    refused(agent, "after[0]", after=[dead.id])
    refused(agent, "after[0]", after=[gone.id], on_parent_failure="cancel")
    open_one = make(agent, "open")
    runner = make(agent, "runner", after=[dead.id, gone.id, open_one.id], on_parent_failure="run")
    assert runner.blocked and runner.parents_left == 1
    alone = make(agent, "alone", after=[dead.id], on_parent_failure="run")
    assert not alone.blocked and alone.parents_left == 0


def test_too_many_parents_a_bad_id_and_a_bad_rule_are_refused(agent):
    a = make(agent, "a")
    refused(agent, "after", after=[f"td_{n:032x}" for n in range(101)])
    refused(agent, "after", after="td_x")
    refused(agent, "after[0]", after=[7])
    refused(agent, "on_parent_failure", after=[a.id], on_parent_failure="ignore")
    refused(agent, "on_parent_failure", on_parent_failure="ignore")


def test_an_idempotent_hit_returns_the_existing_todo_and_writes_no_dependency_rows(agent):
    a, b = make(agent, "a"), make(agent, "b")
    first = execute(agent_store.create(agent, queue="default", title="c", idempotency_key="k", after=[a.id]))
    again = execute(agent_store.create(agent, queue="default", title="c", idempotency_key="k", after=[a.id, b.id]))
    assert first.created and not again.created and again.todo.id == first.todo.id
    rows = sql("SELECT parent_id FROM todo_dependencies WHERE child_id = %s", (first.todo.id,))
    assert rows == [{"parent_id": a.id}]


def marked(todo_id: str) -> bool:
    """Whether a complete of the todo settles children (``has_children``, 0038)."""
    return row(todo_id)["has_children"]


def test_a_parent_is_marked_only_by_a_create_that_waits_for_it(agent):
    """``has_children`` is set by the create that writes an open dependency row on the parent, and
    by no create that is refused, deduplicated, or names a parent that is already settled."""
    waited, done, dead = make(agent, "waited"), make(agent, "done"), make(agent, "dead", max_attempts=1)
    finish(agent, done.id)
    kill(agent, dead.id)
    refused(agent, "after[1]", after=[waited.id, "td_nope"])
    execute(agent_store.create(agent, queue="default", title="k", idempotency_key="k"))
    again = execute(agent_store.create(agent, queue="default", title="k", idempotency_key="k", after=[waited.id]))
    assert not again.created and not marked(waited.id)
    runs = make(agent, "runs", after=[done.id, dead.id], on_parent_failure="run")
    assert not runs.blocked and not marked(done.id) and not marked(dead.id)
    child = make(agent, "child", after=[waited.id])
    assert marked(waited.id) and not marked(child.id)
    finish(agent, waited.id)
    assert state(child.id) == "pending"


# --- create_batch: a whole graph in one call -------------------------------------------------


def test_a_batch_writes_a_graph_by_item_index_and_it_drains_in_order(agent):
    root = make(agent, "root")
    items = [
        {"queue": "default", "title": "plan", "after": [root.id]},
        {"queue": "default", "title": "a", "after_items": [0]},
        {"queue": "default", "title": "b", "after_items": [0]},
        {"queue": "default", "title": "merge", "after_items": [1, 2, 2]},
    ]
    results = execute(agent_store.create_batch(agent, items))
    plan, a, b, merge = (r.todo for r in results)
    assert [t.parents_left for t in (plan, a, b, merge)] == [1, 1, 1, 2]
    assert all(t.blocked for t in (plan, a, b, merge))
    order = []
    while (claim := execute(agent_store.claim_next(agent))) is not None:
        order.append(claim.todo.title)
        execute(agent_store.complete(agent, claim.todo.id))
    assert order[0] == "root" and order[1] == "plan" and sorted(order[2:4]) == ["a", "b"] and order[4] == "merge"


def test_a_batch_marks_every_todo_an_item_waits_for_even_one_answered_by_its_key(agent):
    """An item waits for the todo another item was answered with: its own, an earlier item's with
    the same key, or a live todo holding the key. Each is marked ``has_children`` (inserted marked,
    or updated), and completing it unblocks the waiting item."""
    live = execute(agent_store.create(agent, queue="default", title="live", idempotency_key="live")).todo
    items = [
        {"queue": "default", "title": "again", "idempotency_key": "live"},
        {"queue": "default", "title": "first", "idempotency_key": "twin"},
        {"queue": "default", "title": "second", "idempotency_key": "twin"},
        {"queue": "default", "title": "lone"},
        {"queue": "default", "title": "merge", "after_items": [0, 2]},
    ]
    again, first, second, lone, merge = (r.todo for r in execute(agent_store.create_batch(agent, items)))
    assert again.id == live.id and second.id == first.id and merge.blocked and merge.parents_left == 2
    assert marked(live.id) and marked(first.id) and not marked(lone.id) and not marked(merge.id)
    finish(agent, live.id)
    assert state(merge.id) == "blocked"
    finish(agent, first.id)
    assert state(merge.id) == "pending"


def test_a_batch_reference_to_a_later_item_itself_or_out_of_range_is_refused(agent):
    for refs, index in (([1], 0), ([1], 1), ([-1], 1), ([5], 1), (["0"], 1)):
        items = [{"queue": "default", "title": "x"}, {"queue": "default", "title": "y"}]
        items[index]["after_items"] = refs
        before = counts()
        with pytest.raises(Invalid) as exc:
            execute(agent_store.create_batch(agent, items))
        assert exc.value.field == f"items[{index}].after_items[0]"
        assert counts() == before


def test_a_batch_item_naming_an_unknown_parent_refuses_the_whole_batch(agent):
    a = make(agent, "a")
    items = [
        {"queue": "default", "title": "ok", "after": [a.id]},
        {"queue": "default", "title": "bad", "after": [a.id, "td_missing"]},
    ]
    before = counts()
    with pytest.raises(Invalid) as exc:
        execute(agent_store.create_batch(agent, items))
    assert exc.value.field == "items[1].after[1]"
    assert counts() == before
    with pytest.raises(Invalid) as exc:
        execute(agent_store.create_batch(agent, [{"queue": "default", "title": "r", "on_parent_failure": "x"}]))
    assert exc.value.field == "items[0].on_parent_failure"


def test_a_batch_item_that_deduplicates_writes_no_dependency_rows(agent):
    a = make(agent, "a")
    execute(agent_store.create_batch(agent, [{"queue": "default", "title": "k", "idempotency_key": "k"}]))
    results = execute(
        agent_store.create_batch(agent, [{"queue": "default", "title": "k", "idempotency_key": "k", "after": [a.id]}])
    )
    assert not results[0].created
    assert sql("SELECT count(*) AS n FROM todo_dependencies")[0]["n"] == 0


# --- run anyway ----------------------------------------------------------------------------


def test_run_anyway_unblocks_now_keeps_the_rows_and_a_later_parent_leaves_it_alone(agent, human):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id])
    done = execute(human_store.run_anyway(human, child.id, note="urgent"))
    assert not done.blocked and done.parents_left == 0 and done.next_retry_at is None
    assert sql("SELECT count(*) AS n FROM todo_dependencies WHERE child_id = %s", (child.id,))[0]["n"] == 1
    assert [r["action"] for r in audit(child.id)] == ["todo.run_anyway"]
    claim = execute(agent_store.claim(agent, child.id))
    finish(agent, a.id)
    assert row(claim.todo.id)["state"] == "claimed"


def test_run_anyway_restores_the_child_s_own_time_and_refuses_a_todo_that_is_not_blocked(agent, human):
    a = make(agent, "a")
    child = make(agent, "child", after=[a.id], run_at=later())
    execute(human_store.run_anyway(human, child.id))
    assert state(child.id) == "scheduled"
    with pytest.raises(Conflict):
        execute(human_store.run_anyway(human, a.id))

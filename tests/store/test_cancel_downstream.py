"""Cancel with everything downstream: one statement cancels a todo and every unfinished todo
below it (children, their children…, whatever their rule), closes the attempts of the claimed
ones, audits each row, and leaves finished work and what the person cannot act on alone."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.factories import relayed
from tests.store.helpers import attempts, audit, behind, counts, row, sql
from todos.core.db import execute
from todos.core.selectors import downstream
from todos.core.selectors.access import viewer_for
from todos.core.store import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

from .test_dependencies import finish, make, state
from .test_run_later import board_counts


def viewer(scope):
    return viewer_for(get_user_model().objects.get(pk=scope.user_id))


def shape(agent, human):
    """root ─┬─ blocked (cancel) ── grandchild (cancel)
    ├─ runner (run, blocked)
    ├─ held (ran anyway, claimed by the agent) ── below_held (blocked)
    └─ finished (ran anyway, done)"""
    root = make(agent, "root")
    blocked = make(agent, "blocked", after=[root.id])
    grandchild = make(agent, "grandchild", after=[blocked.id])
    runner = make(agent, "runner", after=[root.id], on_parent_failure="run")
    held = make(agent, "held", after=[root.id])
    execute(human_store.run_anyway(human, held.id))
    execute(agent_store.claim(agent, held.id))
    below_held = make(agent, "below held", after=[held.id])
    finished = make(agent, "finished", after=[root.id])
    execute(human_store.run_anyway(human, finished.id))
    finish(agent, finished.id)
    return root, blocked, grandchild, runner, held, below_held, finished


def test_it_cancels_the_todo_and_everything_unfinished_below_it_in_one_statement(agent, human):
    root, blocked, grandchild, runner, held, below_held, finished = shape(agent, human)
    bystander = make(agent, "bystander")

    outcome = execute(human_store.cancel_downstream(human, root.id, note="wrong input"))

    assert outcome.todo.id == root.id and outcome.todo.state == "canceled"
    gone = [blocked, grandchild, runner, held, below_held]
    assert outcome.downstream == tuple(sorted(t.id for t in gone))
    assert [state(t.id) for t in gone] == ["canceled"] * 5
    assert state(finished.id) == "done" and state(bystander.id) == "pending"
    # the claimed one's attempt is closed as canceled, its lease gone
    assert row(held.id)["owner"] is None and row(held.id)["lease_expires_at"] is None
    last = attempts(held.id)[-1]
    assert (last["outcome"], last["disposition"]) == ("canceled", "canceled") and last["ended_at"] is not None
    # one audit row each, saying why
    for todo in [root, *gone]:
        (entry,) = [a for a in audit(todo.id) if a["action"] == "todo.cancel"]
        assert entry["note"] == "wrong input" and entry["detail"] == {"downstream_of": root.id}
    assert not [a for a in audit(finished.id) if a["action"] == "todo.cancel"]
    relayed()
    assert board_counts(agent.endpoint_id) == {"canceled": 6, "done": 1, "pending": 1}


def test_a_dead_letter_root_and_a_failed_descendant_are_canceled_too(agent, human):
    root = make(agent, "root", max_attempts=1)
    child = make(agent, "child", after=[root.id], on_parent_failure="run")
    execute(agent_store.claim(agent, root.id))
    execute(agent_store.fail(agent, root.id))
    assert state(root.id) == "dead" and state(child.id) == "pending"
    outcome = execute(human_store.cancel_downstream(human, root.id))
    assert outcome.downstream == (child.id,)
    assert state(root.id) == "canceled" and state(child.id) == "canceled"


def test_a_todo_without_children_is_canceled_alone(agent, human):
    lone = make(agent, "lone")
    outcome = execute(human_store.cancel_downstream(human, lone.id))
    assert outcome.todo.state == "canceled" and outcome.downstream == ()


# --- misses: classified, and nothing written ------------------------------------------------


def nothing_written(call, error):
    before = counts(), sql("SELECT id, state FROM todos ORDER BY id")
    with pytest.raises(error) as exc:
        execute(call())
    assert (counts(), sql("SELECT id, state FROM todos ORDER BY id")) == before
    return exc.value


def test_a_finished_todo_is_a_conflict_and_its_unfinished_descendants_stay(agent, human):
    root = make(agent, "root")
    child = make(agent, "child", after=[root.id])
    execute(human_store.run_anyway(human, child.id))
    finish(agent, root.id)
    error = nothing_written(lambda: human_store.cancel_downstream(human, root.id), Conflict)
    assert "no longer in a state you can cancel" in error.message
    assert state(child.id) == "pending"


def test_a_viewer_is_forbidden_and_another_team_or_an_unknown_id_is_not_found(world):
    root = make(world.agent, "root")
    make(world.agent, "child", after=[root.id])
    nothing_written(lambda: human_store.cancel_downstream(world.viewer, root.id), Forbidden)
    nothing_written(lambda: human_store.cancel_downstream(world.outsider, root.id), NotFound)
    nothing_written(lambda: human_store.cancel_downstream(world.human, "td_nope"), NotFound)


def test_a_bad_id_or_note_is_invalid_naming_the_field(human):
    with pytest.raises(Invalid) as exc:
        human_store.cancel_downstream(human, "")
    assert exc.value.field == "id"
    with pytest.raises(Invalid) as exc:
        human_store.cancel_downstream(human, "td_x", note="n" * 2001)
    assert exc.value.field == "note"


def test_a_descendant_outside_the_person_s_teams_is_neither_listed_nor_canceled(world):
    """Dependencies never cross teams; a row written by hand that does is left alone, and the
    preview does not show it."""
    root = make(world.agent, "root")
    mine = make(world.agent, "mine", after=[root.id])
    theirs = make(world.foreign_agent, "theirs")
    sql("INSERT INTO todo_dependencies (child_id, parent_id, settled) VALUES (%s, %s, false)", (theirs.id, root.id))

    preview = downstream.preview(viewer(world.human), root.id)
    assert [d.id for d in preview.descendants] == [mine.id] and preview.total == 1

    outcome = execute(human_store.cancel_downstream(world.human, root.id))
    assert outcome.downstream == (mine.id,)
    assert state(theirs.id) == "pending"
    assert not [a for a in audit(theirs.id) if a["action"] == "todo.cancel"]


# --- the preview ----------------------------------------------------------------------------


def test_the_preview_lists_every_downstream_todo_with_its_state_and_what_the_action_does(agent, human):
    root, blocked, grandchild, runner, held, below_held, finished = shape(agent, human)
    preview = downstream.preview(viewer(human), root.id)
    by_id = {d.id: d for d in preview.descendants}
    assert preview.total == 6 and preview.canceling == 5 and preview.more == 0
    assert {i: (d.state, d.depth, d.cancels) for i, d in by_id.items()} == {
        blocked.id: ("blocked", 1, True),
        runner.id: ("blocked", 1, True),
        held.id: ("claimed", 1, True),
        finished.id: ("done", 1, False),
        grandchild.id: ("blocked", 2, True),
        below_held.id: ("blocked", 2, True),
    }
    assert [d.depth for d in preview.descendants] == sorted(d.depth for d in preview.descendants)
    # exactly what the statement then cancels
    outcome = execute(human_store.cancel_downstream(human, root.id))
    assert set(outcome.downstream) == {d.id for d in preview.descendants if d.cancels}


def test_the_preview_is_capped_and_says_how_many_more(agent, human):
    root = make(agent, "root")
    for n in range(5):
        make(agent, f"kid {n}", after=[root.id])
    preview = downstream.preview(viewer(human), root.id, limit=3)
    assert len(preview.descendants) == 3 and preview.total == 5 and preview.more == 2


# --- races, with real connections -----------------------------------------------------------


def test_a_descendant_completed_while_the_cancel_waits_stays_done_and_its_unblocked_child_is_canceled(agent, human):
    root, blocked, grandchild, runner, held, below_held, finished = shape(agent, human)
    completed, outcome = behind(agent_store.complete(agent, held.id), human_store.cancel_downstream(human, root.id))
    assert completed.state == "done"
    assert not isinstance(outcome, Exception), outcome
    assert held.id not in outcome.downstream and below_held.id in outcome.downstream
    assert state(held.id) == "done" and state(below_held.id) == "canceled"


def test_an_agent_reporting_on_a_descendant_the_cancel_holds_is_refused(agent, human):
    root, blocked, grandchild, runner, held, below_held, finished = shape(agent, human)
    outcome, completed = behind(human_store.cancel_downstream(human, root.id), agent_store.complete(agent, held.id))
    assert held.id in outcome.downstream
    assert isinstance(completed, Conflict), completed
    assert state(held.id) == "canceled"

"""Classified misses: a transition that matches no row says why, and changes nothing.

absent → not found; another tenant's (or another endpoint's) todo → not found, indistinguishable
from absent; a queue outside the endpoint's scope → forbidden; a viewer → forbidden; wrong state
or not the holder → conflict.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.store.helpers import counts, snapshot
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def new(agent, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title="t", **kw)).todo.id


def pending(agent, queue="default"):
    return new(agent, queue)


def claimed(agent, queue="default"):
    todo_id = new(agent, queue)
    execute(agent_store.claim(agent, todo_id))
    return todo_id


# Each agent transition, with the state in which it applies for the endpoint that owns the todo.
AGENT_TRANSITIONS = {
    "claim": (pending, lambda ag, i: agent_store.claim(ag, i)),
    "heartbeat": (claimed, lambda ag, i: agent_store.heartbeat(ag, i)),
    "complete": (claimed, lambda ag, i: agent_store.complete(ag, i, result={"x": 1})),
    "fail": (claimed, lambda ag, i: agent_store.fail(ag, i)),
    "release": (claimed, lambda ag, i: agent_store.release(ag, i)),
}


def assert_refused(error, stmt, todo_id):
    before = snapshot(todo_id)
    with pytest.raises(error) as info:
        execute(stmt)
    assert snapshot(todo_id) == before
    return info.value


def test_agent_transitions_on_another_tenants_todo_are_not_found(world, subtests):
    absent_id = "td_" + "0" * 32
    for verb, (setup, call) in AGENT_TRANSITIONS.items():
        for owner, stranger in (
            (world.foreign_agent, world.agent),
            (world.sibling, world.agent),
            (world.agent, world.foreign_agent),
        ):
            with subtests.test(verb=verb, owner=owner.owner):
                todo_id = setup(owner)
                foreign = assert_refused(NotFound, call(stranger, todo_id), todo_id)
                absent = assert_refused(NotFound, call(stranger, absent_id), todo_id)
                # byte for byte the answer for an absent id, apart from the id itself
                assert foreign.message.replace(todo_id, "ID") == absent.message.replace(absent_id, "ID")
                execute(call(owner, todo_id))  # while its owner still can


def test_agent_transitions_outside_the_scoped_queues_are_forbidden(world, subtests):
    narrowed = dataclasses.replace(world.agent, queues=("default", "other"))
    for verb, (setup, call) in AGENT_TRANSITIONS.items():
        with subtests.test(verb=verb):
            todo_id = setup(world.agent, "third")
            assert_refused(Forbidden, call(narrowed, todo_id), todo_id)


def test_agent_transitions_in_the_wrong_state_are_conflicts(world, subtests):
    done = claimed(world.agent)
    execute(agent_store.complete(world.agent, done))
    for verb, (setup, call) in AGENT_TRANSITIONS.items():
        with subtests.test(verb=verb):
            wrong = claimed if setup is pending else pending
            todo_id = wrong(world.agent)
            assert_refused(Conflict, call(world.agent, todo_id), todo_id)
            assert_refused(Conflict, call(world.agent, done), done)


def test_agent_reports_on_a_lease_a_human_holds_are_conflicts(world, subtests):
    for verb in ("heartbeat", "complete", "fail", "release"):
        with subtests.test(verb=verb):
            _, call = AGENT_TRANSITIONS[verb]
            todo_id = pending(world.agent)
            execute(human_store.claim(world.human, todo_id))
            assert_refused(Conflict, call(world.agent, todo_id), todo_id)


def test_claim_next_outside_the_scope_is_forbidden_and_writes_nothing(world):
    new(world.agent, "third")
    narrowed = dataclasses.replace(world.agent, queues=("default",))
    before = counts()
    with pytest.raises(Forbidden):
        agent_store.claim_next(narrowed, queue="third")
    with pytest.raises(Forbidden):
        agent_store.create(narrowed, queue="third", title="x")
    assert execute(agent_store.claim_next(narrowed)) is None
    assert counts() == before


# --- operator ---------------------------------------------------------------------------------


def human_claimed(world):
    todo_id = new(world.agent)
    execute(human_store.claim(world.human, todo_id))
    return todo_id


def agent_claimed(world):
    return claimed(world.agent)


def retrying(world):
    todo_id = claimed(world.agent)
    execute(agent_store.fail(world.agent, todo_id))
    return todo_id


OPERATOR_TRANSITIONS = {
    "claim": (lambda w: pending(w.agent), lambda op, i: human_store.claim(op, i)),
    "extend": (human_claimed, lambda op, i: human_store.extend(op, i)),
    "complete": (human_claimed, lambda op, i: human_store.complete(op, i, note="n")),
    "fail": (human_claimed, lambda op, i: human_store.fail(op, i, note="n")),
    "release": (human_claimed, lambda op, i: human_store.release(op, i)),
    "force_release": (agent_claimed, lambda op, i: human_store.force_release(op, i)),
    "retry": (retrying, lambda op, i: human_store.retry(op, i)),
    "cancel": (lambda w: pending(w.agent), lambda op, i: human_store.cancel(op, i)),
    "assign": (lambda w: pending(w.agent), lambda op, i: human_store.assign(op, i, "human:1")),
    "set_priority": (lambda w: pending(w.agent), lambda op, i: human_store.set_priority(op, i, 3)),
}


def test_operator_transitions_by_a_non_member_are_not_found(world, subtests):
    """Another team's operator, and a Django superuser who is no member: being a superuser does
    not bypass operatorOwns."""
    from tests import factories
    from todos.core.store.scopes import OperatorScope

    root = factories.user("root", superuser=True)
    superuser = OperatorScope(user_id=root.id, username="root")
    for verb, (setup, call) in OPERATOR_TRANSITIONS.items():
        with subtests.test(verb=verb):
            todo_id = setup(world)
            foreign = assert_refused(NotFound, call(world.outsider, todo_id), todo_id)
            assert_refused(NotFound, call(superuser, todo_id), todo_id)
            absent = assert_refused(NotFound, call(world.human, "td_missing"), todo_id)
            assert foreign.message.replace(todo_id, "ID") == absent.message.replace("td_missing", "ID")
            execute(call(world.human, todo_id))  # while a member can


def test_operator_transitions_by_a_viewer_are_forbidden(world, subtests):
    for verb, (setup, call) in OPERATOR_TRANSITIONS.items():
        with subtests.test(verb=verb):
            todo_id = setup(world)
            assert_refused(Forbidden, call(world.viewer, todo_id), todo_id)
            execute(call(world.human, todo_id))  # an operator of the team can


def test_operator_transitions_in_the_wrong_state_are_conflicts(world, subtests):
    done = claimed(world.agent)
    execute(agent_store.complete(world.agent, done))
    for verb, (_, call) in OPERATOR_TRANSITIONS.items():
        with subtests.test(verb=verb):
            assert_refused(Conflict, call(world.human, done), done)


def test_bulk_actions_skip_what_the_human_may_not_touch(world):
    mine = pending(world.agent)
    foreign = pending(world.foreign_agent)
    before = snapshot(foreign)
    out = execute(human_store.cancel_many(world.viewer, [mine]))
    assert out.changed == () and out.skipped == (mine,)
    out = execute(human_store.cancel_many(world.outsider, [mine, foreign]))
    assert out.changed == (foreign,) and out.skipped == (mine,)
    assert snapshot(mine)[0]["state"] == "pending"
    assert before[0]["state"] == "pending"

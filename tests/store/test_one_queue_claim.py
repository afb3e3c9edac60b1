"""A claim in one queue walks that queue directly, and answers as a claim across queues does.

A claim names one queue when it passes ``queue=`` or its endpoint is scoped to one queue; it then
has its own statement (``fresh`` without the queues' heads). Each guard of the claim is tried in
both shapes: the claim in one queue (``queue="default"``) and the claim across the endpoint's three
queues with the work in ``default``. And a paused endpoint's claim, in either shape, locks no row
while its transaction is open: the pause is read before any scan."""

from __future__ import annotations

import pytest

from tests.store.helpers import lapse, make_due, row
from todos.core import db
from todos.core.db import execute
from todos.core.errors import Paused
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store
from todos.core.store import rate_limits

SHAPES = [pytest.param("default", id="one-queue"), pytest.param(None, id="across-queues")]


def new(agent, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title=kw.pop("title", "t"), **kw)).todo.id


def claim(agent, queue):
    return execute(agent_store.claim_next(agent, queue=queue))


def test_one_queue_has_its_own_statement_and_the_others_keep_the_heads():
    """The shape follows the queues the claim names, not the call: ``queue=`` or a scope of one."""
    from tests import factories

    team = factories.team()
    wide = factories.agent(factories.endpoint(team, slug="wide", queues=("default", "other")))
    narrow = factories.agent(factories.endpoint(team, slug="narrow", queues=("default",)))
    assert "queue_order" in agent_store.claim_next(wide).sql
    for stmt in (
        agent_store.claim_next(wide, queue="other"),
        agent_store.claim_next(narrow),
        agent_store.claim_batch(wide, max=3, queue="default"),
    ):
        assert "queue_order" not in stmt.sql and "t.queue = %(queue)s" in stmt.sql
    assert agent_store.claim_next(wide, queue="other").params["queue"] == "other"
    assert agent_store.claim_next(narrow).params["queue"] == "default"


@pytest.mark.parametrize("queue", SHAPES)
def test_priority_then_age_within_the_queue(agent, queue):
    old = new(agent, title="old")
    urgent = new(agent, title="urgent", priority=-5)
    elsewhere = new(agent, queue="other", title="elsewhere", priority=-9)
    if queue is None:  # across queues the other queue's better head goes first
        assert claim(agent, queue).todo.id == elsewhere
    assert [claim(agent, queue).todo.id for _ in range(2)] == [urgent, old]
    assert row(elsewhere)["state"] == ("claimed" if queue is None else "pending")


@pytest.mark.parametrize("queue", SHAPES)
def test_a_paused_queue_gives_nothing(world, agent, queue):
    todo_id = new(agent)
    execute(human_store.pause_queue(world.human, world.team.id, "default"))
    assert claim(agent, queue) is None
    execute(human_store.resume_queue(world.human, world.team.id, "default"))
    assert claim(agent, queue).todo.id == todo_id


@pytest.mark.parametrize("queue", SHAPES)
def test_a_key_at_its_limit_is_skipped_for_the_next_row(agent, queue):
    first, second = new(agent, concurrency_key="k"), new(agent, concurrency_key="k")
    free = new(agent)
    assert claim(agent, queue).todo.id == first
    assert claim(agent, queue).todo.id == free
    assert claim(agent, queue) is None
    assert row(second)["state"] == "pending"


@pytest.mark.parametrize("queue", SHAPES)
def test_a_throttled_rate_key_is_skipped_for_the_next_row(world, agent, queue):
    execute(rate_limits.set_limit(world.admin, world.team.id, "api", 1, "hour"))
    first, second = new(agent, rate_key="api"), new(agent, rate_key="api")
    free = new(agent)
    assert [claim(agent, queue).todo.id for _ in range(2)] == [first, free]
    assert claim(agent, queue) is None
    assert row(second)["state"] == "pending"


@pytest.mark.parametrize("queue", SHAPES)
def test_a_lapsed_lease_and_a_due_retry_are_taken_too(agent, queue):
    lapsed = new(agent, title="lapsed")
    execute(agent_store.claim(agent, lapsed))
    lapse(lapsed)
    retry = new(agent, title="retry")
    execute(agent_store.claim(agent, retry))
    execute(agent_store.fail(agent, retry))
    make_due(retry)
    taken = {claim(agent, queue).todo.id for _ in range(2)}
    assert taken == {lapsed, retry}
    assert claim(agent, queue) is None


@pytest.mark.parametrize("queue", SHAPES)
def test_a_paused_endpoints_claim_locks_no_row(world, agent, queue):
    """Pending, lapsed and due work all stand ready; the paused claim runs in a transaction held
    open, and another connection can still lock every one of those rows at once."""
    pending = new(agent, title="pending")
    lapsed = new(agent, title="lapsed")
    execute(agent_store.claim(agent, lapsed))
    lapse(lapsed)
    retry = new(agent, title="retry")
    execute(agent_store.claim(agent, retry))
    execute(agent_store.fail(agent, retry))
    make_due(retry)
    execute(endpoint_store.pause_claims(world.admin, agent.endpoint_id))
    with db.connect(autocommit=False) as claimer, db.connect(autocommit=False) as other:
        with pytest.raises(Paused):
            execute(agent_store.claim_next(agent, queue=queue), claimer)
        locked = other.execute(
            "SELECT id FROM todos WHERE id = ANY(%s) FOR UPDATE NOWAIT", ([pending, lapsed, retry],)
        ).fetchall()
        assert sorted(r["id"] for r in locked) == sorted([pending, lapsed, retry])
        other.rollback()
        claimer.rollback()
    assert row(pending)["state"] == "pending" and row(retry)["state"] == "failed"

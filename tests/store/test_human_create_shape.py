"""A person's create takes what an agent's does for work with a shape: parents (``after``, with
the same refusals), a rate key and a run-time limit."""

from __future__ import annotations

import pytest

from tests.store.helpers import audit, counts, dependency_writes, row, sql
from todos.core.db import execute
from todos.core.store import Forbidden, Invalid
from todos.core.store import human as human_store

from .test_dependencies import finish, kill, make, state


def create(world, **kw):
    kw.setdefault("team_id", world.team.id)
    return execute(
        human_store.create(world.human, endpoint_id=world.agent.endpoint_id, queue="default", title="by hand", **kw)
    ).todo


def test_a_person_s_todo_waits_for_its_parents_and_is_unblocked_by_them(world):
    a, b = make(world.agent, "a"), make(world.agent, "b")
    child = create(world, after=[a.id, b.id], rate_key="crawl:upstream", timeout_seconds=600)
    assert child.blocked and child.parents_left == 2 and child.on_parent_failure == "cancel"
    assert (child.rate_key, child.timeout_seconds) == ("crawl:upstream", 600)
    assert [
        r["parent_id"]
        for r in sql("SELECT parent_id FROM todo_dependencies WHERE child_id = %s ORDER BY 1", (child.id,))
    ] == sorted([a.id, b.id])
    assert [x["action"] for x in audit(child.id)] == ["todo.create"]
    finish(world.agent, a.id)
    finish(world.agent, b.id)
    assert state(child.id) == "pending"


def test_a_run_child_accepts_a_dead_parent_and_a_done_one_does_not_block(world):
    dead, done = make(world.agent, "dead", max_attempts=1), make(world.agent, "done")
    kill(world.agent, dead.id)
    finish(world.agent, done.id)
    child = create(world, after=[dead.id, done.id], on_parent_failure="run")
    assert not child.blocked and child.parents_left == 0 and state(child.id) == "pending"


def refused(world, field, **kw):
    before = counts(), dependency_writes()
    with pytest.raises(Invalid) as exc:
        create(world, **kw)
    assert exc.value.field == field, exc.value
    assert (counts(), dependency_writes()) == before
    return exc.value


def test_bad_parents_a_bad_rule_a_bad_rate_key_or_limit_are_refused_naming_the_field(world):
    mine = make(world.agent, "mine")
    theirs = make(world.foreign_agent, "theirs")
    assert "no such todo" in refused(world, "after[1]", after=[mine.id, theirs.id]).problem
    refused(world, "after[0]", after=["td_nope"])
    gone = make(world.agent, "gone", max_attempts=1)
    kill(world.agent, gone.id)
    assert "dead or canceled" in refused(world, "after[0]", after=[gone.id]).problem
    refused(world, "after", after=[f"td_{n}" for n in range(101)])
    refused(world, "on_parent_failure", after=[mine.id], on_parent_failure="maybe")
    refused(world, "on_parent_failure", on_parent_failure="maybe")
    refused(world, "rate_key", rate_key="two\nlines")
    refused(world, "timeout_seconds", timeout_seconds=0)
    refused(world, "timeout_seconds", timeout_seconds=604801)


def test_the_parents_must_be_the_endpoint_s_team_s(world):
    """Given another team than the endpoint's, its own todos are not found among that team's
    parents, and the guard would refuse the endpoint besides: nothing is written."""
    mine = make(world.agent, "mine")
    before = counts()
    with pytest.raises(Invalid) as exc:
        create(world, after=[mine.id], team_id=world.foreign_team.id)
    assert exc.value.field == "after[0]"
    assert counts() == before
    theirs = make(world.foreign_agent, "theirs")
    before = counts()
    with pytest.raises(Forbidden):
        create(world, after=[theirs.id], team_id=world.foreign_team.id)
    assert counts() == before and row(mine.id)["state"] == "pending"

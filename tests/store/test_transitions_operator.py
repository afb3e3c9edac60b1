"""The operator (Board) rows of the transition table: a human's lease, force-release, cancel,
retry, assign, priority, create and queue pauses, each audited with the human's identity."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.store.helpers import attempts, audit, counts, lapse, make_due, row, snapshot
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def new(agent, **kw) -> str:
    kw.setdefault("queue", "default")
    kw.setdefault("title", "a todo")
    return execute(agent_store.create(agent, **kw)).todo.id


def audited(todo_id: str, human, action: str, note=None) -> dict:
    """The newest audit row of the todo: it names the human and the action."""
    last = audit(todo_id)[-1]
    assert (last["action"], last["user_id"], last["actor"], last["note"]) == (
        action,
        human.user_id,
        human.username,
        note,
    )
    return last


def test_a_human_claim_is_owned_by_the_human_with_claimer_kind_owner(world):
    human = world.human
    todo_id = new(world.agent)
    claim = execute(human_store.claim(human, todo_id))
    r = row(todo_id)
    assert claim.todo.owner == f"human:{human.user_id}" == r["owner"]
    assert (r["state"], r["attempt"], r["attempts_total"]) == ("claimed", 1, 1)
    assert r["lease_expires_at"] - r["claimed_at"] == timedelta(minutes=30)
    [a] = attempts(todo_id)
    assert (a["claimer_kind"], a["owner"], a["claimer_endpoint_id"], a["claimant"]) == (
        "owner",
        r["owner"],
        None,
        "Board · olive",
    )
    audited(todo_id, human, "todo.claim")


def test_a_human_may_claim_in_a_paused_queue_and_takes_over_a_lapsed_lease(world):
    human = world.human
    todo_id = new(world.agent)
    execute(agent_store.claim(world.agent, todo_id))
    lapse(todo_id)
    execute(human_store.pause_queue(human, world.team.id, "default"))
    claim = execute(human_store.claim(human, todo_id, lease_ttl_seconds=120))
    assert claim.took_over
    old, new_attempt = attempts(todo_id)
    assert (old["outcome"], old["disposition"]) == ("lease_expired", "requeued")
    assert new_attempt["claimer_kind"] == "owner"
    r = row(todo_id)
    assert r["lease_expires_at"] - r["claimed_at"] == timedelta(seconds=120)


def test_a_human_claim_ttl_is_bounded(world):
    todo_id = new(world.agent)
    for bad in (59, 86401, "600", True):
        with pytest.raises(Invalid) as info:
            human_store.claim(world.human, todo_id, lease_ttl_seconds=bad)
        assert info.value.field == "lease_ttl_seconds"


def test_extend_stamps_the_humans_open_attempt(world):
    human = world.human
    todo_id = new(world.agent)
    execute(human_store.claim(human, todo_id, lease_ttl_seconds=60))
    execute(human_store.extend(human, todo_id, lease_ttl_seconds=3600))
    r = row(todo_id)
    assert r["lease_expires_at"] - r["updated_at"] == timedelta(hours=1)
    [a] = attempts(todo_id)
    assert a["ended_at"] is None and a["last_heartbeat_at"] == r["updated_at"]
    assert a["lease_expires_at"] == r["lease_expires_at"]
    audited(todo_id, human, "todo.extend")


def test_complete_by_the_human_holder(world):
    human = world.human
    todo_id = new(world.agent)
    execute(human_store.claim(human, todo_id))
    execute(human_store.complete(human, todo_id, note="  done by hand ", result={"fixed": True}))
    r = row(todo_id)
    assert (r["state"], r["result"], r["owner"]) == ("done", {"fixed": True}, None)
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"], a["summary"]) == ("completed", "done", "done by hand")
    audited(todo_id, human, "todo.complete", note="done by hand")


def test_fail_by_the_human_holder_schedules_a_retry_or_dead_letters(world):
    human = world.human
    retrying = new(world.agent)
    dying = new(world.agent, max_attempts=1)
    for todo_id in (retrying, dying):
        execute(human_store.claim(human, todo_id))
        execute(human_store.fail(human, todo_id, note="no good"))
        audited(todo_id, human, "todo.fail", note="no good")
    r = row(retrying)
    assert r["state"] == "failed" and r["next_retry_at"] - r["updated_at"] == timedelta(seconds=30)
    assert r["result"] == {"error": "failed_by_operator", "note": "no good"}
    assert [(a["outcome"], a["disposition"], a["summary"]) for a in attempts(retrying)] == [
        ("failed", "retry_scheduled", "no good")
    ]
    r = row(dying)
    assert r["state"] == "failed" and r["next_retry_at"] is None
    assert [(a["outcome"], a["disposition"]) for a in attempts(dying)] == [("failed", "dead_lettered")]


def test_release_by_the_human_holder(world):
    human = world.human
    todo_id = new(world.agent)
    execute(human_store.claim(human, todo_id))
    execute(human_store.release(human, todo_id, note="later"))
    r = row(todo_id)
    assert (r["state"], r["owner"], r["attempt"]) == ("pending", None, 1)
    assert [(a["outcome"], a["disposition"], a["summary"]) for a in attempts(todo_id)] == [
        ("released", "requeued", "later")
    ]
    audited(todo_id, human, "todo.release", note="later")


@pytest.mark.parametrize("verb", ["extend", "complete", "fail", "release"])
def test_a_human_acts_only_on_their_own_lease(world, verb):
    todo_id = new(world.agent)
    execute(agent_store.claim(world.agent, todo_id))
    before = snapshot(todo_id)
    with pytest.raises(Conflict):
        execute(getattr(human_store, verb)(world.human, todo_id))
    assert snapshot(todo_id) == before
    # nor on another human's
    other = new(world.agent)
    execute(human_store.claim(world.admin, other))
    before = snapshot(other)
    with pytest.raises(Conflict):
        execute(getattr(human_store, verb)(world.human, other))
    assert snapshot(other) == before


def test_force_release_takes_an_agents_lease_away(world):
    human = world.human
    todo_id = new(world.agent)
    claim = execute(agent_store.claim(world.agent, todo_id, require_fence=True))
    execute(human_store.force_release(human, todo_id, note="agent is stuck"))
    r = row(todo_id)
    assert (r["state"], r["owner"], r["lease_expires_at"], r["attempt"]) == ("pending", None, None, 1)
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"]) == ("released", "requeued")
    audited(todo_id, human, "todo.force_release", note="agent is stuck")
    # the agent's token is now stale
    with pytest.raises(Conflict):
        execute(agent_store.complete(world.agent, todo_id, lease_token=claim.lease_token))
    with pytest.raises(Conflict):
        execute(human_store.force_release(human, todo_id))


def _pending(world):
    return new(world.agent)


def _claimed(world):
    todo_id = new(world.agent)
    execute(agent_store.claim(world.agent, todo_id))
    return todo_id


def _retrying(world):
    todo_id = _claimed(world)
    execute(agent_store.fail(world.agent, todo_id))
    return todo_id


def _dead(world):
    todo_id = new(world.agent, max_attempts=1)
    execute(agent_store.claim(world.agent, todo_id))
    execute(agent_store.fail(world.agent, todo_id, result={"error": "x"}))
    return todo_id


@pytest.mark.parametrize("setup", [_pending, _claimed, _retrying, _dead])
def test_cancel_stops_any_live_todo(world, setup):
    todo_id = setup(world)
    had_attempt = bool(attempts(todo_id))
    execute(human_store.cancel(world.human, todo_id, note="not needed"))
    r = row(todo_id)
    assert (r["state"], r["owner"], r["lease_expires_at"], r["next_retry_at"]) == ("canceled", None, None, None)
    assert r["completed_at"] == r["updated_at"]
    closing = [a for a in attempts(todo_id) if a["ended_at"] == r["updated_at"]]
    if setup is _claimed:
        assert [(a["outcome"], a["disposition"]) for a in closing] == [("canceled", "canceled")]
    else:
        assert closing == [] and bool(attempts(todo_id)) == had_attempt
    audited(todo_id, world.human, "todo.cancel", note="not needed")


def test_cancel_of_a_terminal_todo_is_a_conflict(world):
    done = _claimed(world)
    execute(agent_store.complete(world.agent, done))
    canceled = _pending(world)
    execute(human_store.cancel(world.human, canceled))
    for todo_id in (done, canceled):
        before = snapshot(todo_id)
        with pytest.raises(Conflict):
            execute(human_store.cancel(world.human, todo_id))
        assert snapshot(todo_id) == before


@pytest.mark.parametrize("setup", [_retrying, _dead])
def test_retry_gives_a_failed_todo_a_fresh_budget(world, setup):
    todo_id = setup(world)
    execute(human_store.retry(world.human, todo_id, note="try again"))
    r = row(todo_id)
    assert (r["state"], r["attempt"], r["attempts_total"]) == ("pending", 0, 1)
    assert (r["result"], r["claimed_at"], r["completed_at"], r["next_retry_at"], r["owner"]) == (None,) * 5
    assert len(attempts(todo_id)) == 1  # retry touches no attempt
    audited(todo_id, world.human, "todo.retry", note="try again")
    claim = execute(agent_store.claim(world.agent, todo_id))
    assert (claim.todo.attempt, claim.attempt_seq) == (1, 2)


@pytest.mark.parametrize("setup", [_pending, _claimed])
def test_retry_of_a_live_todo_is_a_conflict(world, setup):
    todo_id = setup(world)
    before = snapshot(todo_id)
    with pytest.raises(Conflict):
        execute(human_store.retry(world.human, todo_id))
    assert snapshot(todo_id) == before


def test_bulk_retry_and_cancel_report_changed_and_skipped(world):
    dead, retrying, pending = _dead(world), _retrying(world), _pending(world)
    foreign = new(world.foreign_agent)
    out = execute(human_store.retry_many(world.human, [dead, retrying, pending, foreign, "td_missing"]))
    assert out.changed == (dead, retrying) and out.skipped == (pending, foreign, "td_missing")
    claimed = _claimed(world)
    out = execute(human_store.cancel_many(world.human, [dead, claimed, foreign]))
    assert out.changed == (dead, claimed) and out.skipped == (foreign,)
    assert [(a["outcome"], a["disposition"]) for a in attempts(claimed)] == [("canceled", "canceled")]
    assert row(foreign)["state"] == "pending"
    todo_rows = [r for r in audit() if r["todo_id"]]
    assert sorted((r["action"], r["todo_id"]) for r in todo_rows) == sorted(
        [("todo.retry", dead), ("todo.retry", retrying), ("todo.cancel", dead), ("todo.cancel", claimed)]
    )


def test_assign_and_unassign_a_pending_todo(world):
    todo_id = _pending(world)
    execute(human_store.assign(world.human, todo_id, world.human.owner))
    assert row(todo_id)["assignee"] == world.human.owner
    assert execute(agent_store.claim_next(world.agent)) is None  # reserved for the human
    last = audited(todo_id, world.human, "todo.assign")
    assert last["detail"] == {"assignee": world.human.owner}
    execute(human_store.assign(world.human, todo_id, None))
    assert row(todo_id)["assignee"] is None
    audited(todo_id, world.human, "todo.unassign")
    with pytest.raises(Invalid) as info:
        human_store.assign(world.human, todo_id, "bob")
    assert info.value.field == "assignee"
    claimed = _claimed(world)
    with pytest.raises(Conflict):
        execute(human_store.assign(world.human, claimed, world.human.owner))


def test_set_priority_reorders_claims(world):
    first, second = _pending(world), _pending(world)
    execute(human_store.set_priority(world.human, second, -1))
    assert row(second)["priority"] == -1
    assert audited(second, world.human, "todo.priority")["detail"] == {"priority": -1}
    assert execute(agent_store.claim_next(world.agent)).todo.id == second
    for bad in (40000, "1", None, 1.0):
        with pytest.raises(Invalid):
            human_store.set_priority(world.human, first, bad)


def test_a_human_creates_on_a_team_endpoint(world):
    human = world.human
    created = execute(
        human_store.create(
            human, endpoint_id=world.agent.endpoint_id, queue="other", title="by hand", idempotency_key="k"
        )
    )
    assert created.created and created.todo.source == "board" and created.todo.queue == "other"
    audited(created.todo.id, human, "todo.create")
    again = execute(
        human_store.create(
            human, endpoint_id=world.agent.endpoint_id, queue="other", title="by hand", idempotency_key="k"
        )
    )
    assert not again.created and again.todo.id == created.todo.id
    assert len(audit(created.todo.id)) == 1  # a collapsed duplicate records nothing


def test_a_human_create_is_checked_against_the_endpoint(world):
    before = counts()
    with pytest.raises(NotFound):
        execute(
            human_store.create(world.human, endpoint_id=world.foreign_agent.endpoint_id, queue="default", title="x")
        )
    with pytest.raises(Forbidden):  # not in the endpoint's scope
        execute(human_store.create(world.human, endpoint_id=world.sibling.endpoint_id, queue="other", title="x"))
    with pytest.raises(Forbidden):
        execute(human_store.create(world.viewer, endpoint_id=world.agent.endpoint_id, queue="default", title="x"))
    with pytest.raises(Invalid):
        human_store.create(world.human, endpoint_id="nope", queue="default", title="x")
    assert counts() == before


def test_pause_and_resume_are_audited_and_need_a_role(world):
    assert execute(human_store.pause_queue(world.human, world.team.id, "default", note="deploy")) is True
    [row_] = [r for r in audit() if r["action"].startswith("queue.")]
    assert (row_["action"], row_["queue"], row_["note"], row_["user_id"]) == (
        "queue.pause",
        "default",
        "deploy",
        world.human.user_id,
    )
    with pytest.raises(Forbidden):
        execute(human_store.resume_queue(world.viewer, world.team.id, "default"))
    with pytest.raises(NotFound):
        execute(human_store.resume_queue(world.outsider, world.team.id, "default"))
    assert execute(human_store.resume_queue(world.human, world.team.id, "default")) is True
    assert execute(human_store.resume_queue(world.human, world.team.id, "default")) is False
    assert [r["action"] for r in audit() if r["action"].startswith("queue.")] == ["queue.pause", "queue.resume"]


def test_a_human_claims_a_due_retry_without_waiting(world):
    todo_id = _retrying(world)
    with pytest.raises(Conflict):  # the window is still open
        execute(human_store.claim(world.human, todo_id))
    make_due(todo_id)
    claim = execute(human_store.claim(world.human, todo_id))
    assert claim.todo.next_retry_at is None and claim.todo.attempt == 2

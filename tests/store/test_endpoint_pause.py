"""Pausing an endpoint's claims: every claim refused ``paused`` naming who paused it, reports
still land, resume, the audit rows, who may; and the ``last_seen_at`` stamp that claims and
reports carry (at most once a minute, never waiting for the endpoint's row)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from tests.store.helpers import attempts, audit, lapse, listening, make_due, one, row, sql
from todos.core import db
from todos.core.db import execute
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound, Paused
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store.endpoint_gate import STAMPS
from todos.core.store.fragments import READY_CHANNEL


def new(agent, **kw) -> str:
    kw.setdefault("queue", "default")
    kw.setdefault("title", "a todo")
    return execute(agent_store.create(agent, **kw)).todo.id


def endpoint(ep) -> dict:
    return one("SELECT * FROM endpoints WHERE id = %s", (ep,))


def endpoint_audit(ep) -> list[dict]:
    """The endpoint's audit rows of pauses and resumptions."""
    return [a for a in audit() if a["endpoint_id"] == ep and a["action"] in ("endpoint.pause", "endpoint.resume")]


# --- pause and resume -------------------------------------------------------------------------


def test_a_paused_endpoint_claims_nothing_and_is_told_who_paused_it(world):
    agent = world.agent
    todo_id = new(agent)
    paused = execute(endpoint_store.pause_claims(world.admin, agent.endpoint_id, note="draining"))
    assert paused.claims_paused_at is not None and paused.claims_paused_by == "adam"
    for stmt in (
        agent_store.claim_next(agent),
        agent_store.claim_next(agent, queue="default"),
        agent_store.claim_batch(agent, max=5),
        agent_store.claim(agent, todo_id),
    ):
        with pytest.raises(Paused) as info:
            execute(stmt)
        assert info.value.code == "paused"
        assert "paused (by adam" in info.value.message and "Agents page" in info.value.message
    assert row(todo_id)["state"] == "pending" and attempts(todo_id) == []


def test_paused_claims_refuse_even_when_nothing_is_claimable(world):
    """An empty queue answers ``paused`` too, not "empty": the worker must know why."""
    execute(endpoint_store.pause_claims(world.admin, world.agent.endpoint_id))
    with pytest.raises(Paused):
        execute(agent_store.claim_next(world.agent))


def test_a_paused_endpoint_takes_no_lapsed_lease_or_due_retry(world):
    agent = world.agent
    lapsed = new(agent)
    claim = execute(agent_store.claim(agent, lapsed))
    lapse(lapsed)
    retry = new(agent, title="retry")
    execute(agent_store.claim(agent, retry))
    execute(agent_store.fail(agent, retry))
    make_due(retry)
    execute(endpoint_store.pause_claims(world.admin, agent.endpoint_id))
    with pytest.raises(Paused):
        execute(agent_store.claim_batch(agent, max=10))
    assert row(lapsed)["attempts_total"] == claim.attempts_total
    assert row(retry)["state"] == "failed"


def test_reports_of_a_paused_endpoint_still_land(world):
    agent = world.agent
    ids = [new(agent, title=f"t{i}") for i in range(4)]
    for todo_id in ids:
        execute(agent_store.claim(agent, todo_id))
    execute(endpoint_store.pause_claims(world.admin, agent.endpoint_id))
    execute(agent_store.heartbeat(agent, ids[0]))
    execute(agent_store.complete(agent, ids[0], result={"ok": True}))
    execute(agent_store.fail(agent, ids[1]))
    execute(agent_store.release(agent, ids[2]))
    outcomes = execute(agent_store.complete_batch(agent, [{"id": ids[3]}]))
    assert all(o.ok for o in outcomes)
    assert [row(i)["state"] for i in ids] == ["done", "failed", "pending", "done"]
    assert [attempts(i)[-1]["outcome"] for i in ids] == ["completed", "failed", "released", "completed"]


def test_resume_lets_claims_take_work_again(world):
    agent = world.agent
    todo_id = new(agent)
    execute(endpoint_store.pause_claims(world.admin, agent.endpoint_id))
    resumed = execute(endpoint_store.resume_claims(world.admin, agent.endpoint_id))
    assert resumed.claims_paused_at is None and resumed.claims_paused_by is None
    assert execute(agent_store.claim_next(agent)).todo.id == todo_id


def test_pause_touches_only_that_endpoint(world):
    todo_id = new(world.sibling)
    execute(endpoint_store.pause_claims(world.admin, world.agent.endpoint_id))
    assert execute(agent_store.claim_next(world.sibling)).todo.id == todo_id
    assert execute(agent_store.claim_next(world.foreign_agent)) is None


def test_pause_and_resume_are_audited(world):
    ep = world.agent.endpoint_id
    execute(endpoint_store.pause_claims(world.admin, ep, note="draining the box"))
    execute(endpoint_store.resume_claims(world.admin, ep))
    pause, resume = endpoint_audit(ep)[-2:]
    assert (pause["action"], pause["actor"], pause["note"]) == ("endpoint.pause", "adam", "draining the box")
    assert pause["detail"]["paused_at"] is not None
    assert (resume["action"], resume["actor"]) == ("endpoint.resume", "adam")
    assert resume["detail"]["paused_by"] == "adam" and resume["detail"]["paused_at"] == pause["detail"]["paused_at"]


def test_a_second_pause_or_a_resume_of_running_claims_is_a_conflict_and_writes_nothing(world):
    ep = world.agent.endpoint_id
    with pytest.raises(Conflict, match="not paused"):
        execute(endpoint_store.resume_claims(world.admin, ep))
    execute(endpoint_store.pause_claims(world.admin, ep))
    before = len(audit())
    with pytest.raises(Conflict, match="already paused"):
        execute(endpoint_store.pause_claims(world.admin, ep))
    assert len(audit()) == before


def test_only_the_endpoints_team_admins_pause(world):
    ep = world.agent.endpoint_id
    with pytest.raises(Forbidden):
        execute(endpoint_store.pause_claims(world.human, ep))
    with pytest.raises(Forbidden):
        execute(endpoint_store.pause_claims(world.viewer, ep))
    with pytest.raises(NotFound):
        execute(endpoint_store.pause_claims(world.outsider, ep))
    assert endpoint(ep)["claims_paused_at"] is None and endpoint_audit(ep) == []
    execute(endpoint_store.pause_claims(world.admin, ep))
    with pytest.raises(Forbidden):
        execute(endpoint_store.resume_claims(world.human, ep))
    with pytest.raises(NotFound):
        execute(endpoint_store.resume_claims(world.outsider, ep))
    assert endpoint(ep)["claims_paused_at"] is not None


def test_a_revoked_endpoint_cannot_be_paused(world):
    ep = world.agent.endpoint_id
    execute(endpoint_store.revoke(world.admin, ep))
    with pytest.raises(Conflict, match="revoked"):
        execute(endpoint_store.pause_claims(world.admin, ep))


def test_bad_ids_and_notes_are_refused_before_anything_is_written(world):
    with pytest.raises(Invalid) as info:
        endpoint_store.pause_claims(world.admin, "nope")
    assert info.value.field == "endpoint"
    with pytest.raises(Invalid) as info:
        endpoint_store.pause_claims(world.admin, world.agent.endpoint_id, note="x" * 2001)
    assert info.value.field == "note"
    assert endpoint_audit(world.agent.endpoint_id) == []


def test_pause_and_resume_wake_the_endpoints_waiting_claims_and_forget_its_credential(world):
    ep = world.agent.endpoint_id
    for change in (endpoint_store.pause_claims, endpoint_store.resume_claims):
        with listening(READY_CHANNEL, "board_credentials") as listener:
            execute(change(world.admin, ep))
            messages = listener.drain()
        ready = [m for channel, m in messages if channel == READY_CHANNEL]
        # each of its queues, with no count: every waiting claim wakes and meets the change
        assert sorted(m["queue"] for m in ready) == ["default", "other", "third"]
        assert all(m["endpoint"] == str(ep) and "n" not in m for m in ready)
        assert [m["endpoints"] for channel, m in messages if channel == "board_credentials"] == [[str(ep)]]


# --- last seen ----------------------------------------------------------------------------------


def seen(ep):
    return endpoint(ep)["last_seen_at"]


def test_a_claim_stamps_last_seen_without_any_request(world):
    agent = world.agent
    new(agent)
    assert seen(agent.endpoint_id) is None
    execute(agent_store.claim_next(agent))
    assert seen(agent.endpoint_id) is not None


def test_an_empty_claim_stamps_last_seen_too(world):
    execute(agent_store.claim_next(world.agent))
    assert seen(world.agent.endpoint_id) is not None


@pytest.mark.parametrize("report", ["complete", "fail", "heartbeat", "release", "complete_batch"])
def test_each_report_stamps_last_seen(world, report):
    agent = world.agent
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    sql("UPDATE endpoints SET last_seen_at = NULL WHERE id = %s", (agent.endpoint_id,))
    STAMPS.forget()  # as if this process had not stamped it for a minute
    if report == "complete_batch":
        execute(agent_store.complete_batch(agent, [{"id": todo_id}]))
    else:
        execute(getattr(agent_store, report)(agent, todo_id))
    assert seen(agent.endpoint_id) is not None


def test_last_seen_is_stamped_at_most_once_a_minute(world):
    agent = world.agent
    for i in range(3):
        new(agent, title=f"t{i}")
    execute(agent_store.claim_next(agent))
    first = seen(agent.endpoint_id)
    claim = execute(agent_store.claim_next(agent))
    execute(agent_store.complete(agent, claim.todo.id))
    assert seen(agent.endpoint_id) == first
    sql("UPDATE endpoints SET last_seen_at = last_seen_at - interval '61 seconds' WHERE id = %s", (agent.endpoint_id,))
    STAMPS.forget()  # a minute passes for this process too
    execute(agent_store.claim_next(agent))
    assert seen(agent.endpoint_id) > first - timedelta(seconds=61)  # stamped again: a minute had passed


def test_a_claim_never_waits_for_the_endpoint_row(world):
    """Another transaction holds the endpoint's row (a person's change, not yet committed): a
    claim and a completion go ahead at once, and leave the stamp to a later call. (An UPDATE of
    the endpoint locks its row FOR NO KEY UPDATE, which the attempt row's foreign key does not
    wait for; only the stamp could have.)"""
    agent = world.agent
    todo_id = new(agent)
    with db.connect(autocommit=False) as holder:
        holder.execute("UPDATE endpoints SET name = name || ' (renamed)' WHERE id = %s", (agent.endpoint_id,))
        done: dict = {}

        def work():
            started = time.monotonic()
            claim = execute(agent_store.claim_next(agent))
            execute(agent_store.complete(agent, claim.todo.id))
            done["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=work)
        thread.start()
        thread.join(10)
        assert not thread.is_alive(), "the claim waited for the endpoint's row"
        holder.rollback()
    assert done["seconds"] < 5
    assert row(todo_id)["state"] == "done"
    assert seen(agent.endpoint_id) is None  # skipped, not waited for
    STAMPS.forget()
    execute(agent_store.claim_next(agent))
    assert seen(agent.endpoint_id) is not None


def test_a_demo_agent_waits_out_a_pause_without_crashing(world, caplog):
    """The demo's simulated agents claim in-process: a paused endpoint makes them wait, not
    log a crash every two seconds."""
    from todos.ops.demo import DemoAgent, SimulatedAgents

    execute(endpoint_store.pause_claims(world.admin, world.agent.endpoint_id))
    agents = SimulatedAgents({"worker": world.agent}, speed=100.0, seed=1)
    spec = DemoAgent("worker", "Worker", ("default",), (1, 1), 0.0, 0.0)
    timer = threading.Timer(0.5, agents.stop.set)
    timer.start()
    with caplog.at_level("ERROR", logger="todos.ops.demo"):
        agents._work(spec, 0)  # returns once stopped; Paused would propagate out of it
    timer.cancel()
    assert not [r for r in caplog.records if "crashed" in r.getMessage()]

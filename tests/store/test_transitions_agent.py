"""Every agent row of the transition table in docs/lifecycle.md ("Transitions"): the todo's effect
and the attempt row."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from tests.store.helpers import attempts, db_now, lapse, make_due, row, sql
from todos.core.db import execute
from todos.core.store import Conflict
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def new(agent, **kw) -> str:
    kw.setdefault("queue", "default")
    kw.setdefault("title", "a todo")
    return execute(agent_store.create(agent, **kw)).todo.id


def test_create_inserts_a_pending_todo_and_no_attempt(agent):
    created = execute(
        agent_store.create(agent, queue="default", title="t", kind="k", source="s", payload={"a": [1, 2]})
    )
    assert created.created is True
    r = row(created.todo.id)
    assert r["id"].startswith("td_") and len(r["id"]) == 35
    assert (r["state"], r["owner"], r["lease_expires_at"], r["attempt"], r["attempts_total"]) == (
        "pending",
        None,
        None,
        0,
        0,
    )
    assert (r["max_attempts"], r["priority"], r["payload"], r["kind"], r["source"]) == (5, 0, {"a": [1, 2]}, "k", "s")
    assert r["endpoint_id"] == agent.endpoint_id
    assert r["idempotency_key"] is None
    assert attempts(created.todo.id) == []


def test_create_treats_an_empty_idempotency_key_as_none(agent):
    a = execute(agent_store.create(agent, queue="default", title="t", idempotency_key=""))
    b = execute(agent_store.create(agent, queue="default", title="t", idempotency_key=""))
    assert a.created and b.created and a.todo.id != b.todo.id
    assert row(a.todo.id)["idempotency_key"] is None


@pytest.mark.parametrize("by_id", [False, True], ids=["claim_next", "claim"])
def test_claim_leases_the_todo_and_opens_attempt_one(agent, by_id):
    todo_id = new(agent)
    before = row(todo_id)
    if by_id:
        claim = execute(agent_store.claim(agent, todo_id, lease_ttl_seconds=120, claimant="worker-7"))
    else:
        claim = execute(agent_store.claim_next(agent, lease_ttl_seconds=120, claimant="worker-7"))
    r = row(todo_id)
    assert claim.todo.id == todo_id and claim.attempt_seq == 1 and claim.attempts_total == 1
    assert claim.lease_token is None and claim.took_over is False and claim.prior_attempts == ()
    assert r["state"] == "claimed" and r["owner"] == f"endpoint:{agent.endpoint_id}"
    assert (r["attempt"], r["attempts_total"], r["next_retry_at"]) == (1, 1, None)
    assert r["lease_expires_at"] - r["claimed_at"] == timedelta(seconds=120)
    assert r["updated_at"] > before["updated_at"]
    [a] = attempts(todo_id)
    assert (a["seq"], a["attempt"], a["claimer_kind"], a["owner"]) == (1, 1, "endpoint", r["owner"])
    assert a["claimer_endpoint_id"] == agent.endpoint_id and a["claimant"] == "worker-7"
    assert a["lease_expires_at"] == r["lease_expires_at"] and a["claimed_at"] == r["claimed_at"]
    assert (a["ended_at"], a["outcome"], a["disposition"], a["lease_token_hash"]) == (None, None, None, None)


def test_claim_uses_the_endpoint_default_lease_then_the_server_default(world, settings):
    from tests import factories

    settings.BOARD_DEFAULT_LEASE_SECONDS = 300
    custom = factories.agent(factories.endpoint(world.team, slug="slow", lease=900))
    for scope, expected in ((custom, 900), (world.agent, 300)):
        todo_id = new(scope)
        execute(agent_store.claim(scope, todo_id))
        r = row(todo_id)
        assert r["lease_expires_at"] - r["claimed_at"] == timedelta(seconds=expected)


def test_claim_next_takes_lower_priority_first_then_oldest(agent):
    late_urgent = None
    first = new(agent, title="first")
    second = new(agent, title="second")
    late_urgent = new(agent, title="urgent", priority=-5)
    order = [execute(agent_store.claim_next(agent)).todo.id for _ in range(3)]
    assert order == [late_urgent, first, second]
    assert execute(agent_store.claim_next(agent)) is None


def test_claim_next_across_queues_takes_the_best_head_first(agent):
    old_default = new(agent, queue="default", title="old")
    urgent_other = new(agent, queue="other", title="urgent", priority=-1)
    newer_third = new(agent, queue="third", title="newer")
    newer_default = new(agent, queue="default", title="newest")
    order = [execute(agent_store.claim_next(agent)).todo.id for _ in range(4)]
    assert order == [urgent_other, old_default, newer_third, newer_default]


def test_claim_next_skips_a_queue_whose_head_is_not_for_this_claimer(world):
    agent = world.agent
    new(agent, queue="default", assignee=world.sibling.owner)
    mine = new(agent, queue="other")
    assert execute(agent_store.claim_next(agent)).todo.id == mine


def test_claim_next_can_be_narrowed_to_one_queue(agent):
    in_default = new(agent, queue="default")
    in_other = new(agent, queue="other")
    assert execute(agent_store.claim_next(agent, queue="other")).todo.id == in_other
    assert execute(agent_store.claim_next(agent, queue="other")) is None
    assert execute(agent_store.claim_next(agent)).todo.id == in_default


def test_claim_respects_the_assignee(world):
    mine = new(world.agent, assignee=world.agent.owner)
    theirs = new(world.agent, assignee=world.sibling.owner)
    assert execute(agent_store.claim_next(world.agent)).todo.id == mine
    assert execute(agent_store.claim_next(world.agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(world.agent, theirs))
    assert row(theirs)["state"] == "pending"


def test_agents_skip_a_paused_queue_and_a_claim_by_id_there_is_a_conflict(world):
    todo_id = new(world.agent)
    assert execute(human_store.pause_queue(world.human, world.team.id, "default")) is True
    assert execute(human_store.pause_queue(world.human, world.team.id, "default")) is False
    assert execute(agent_store.claim_next(world.agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(world.agent, todo_id))
    assert row(todo_id)["state"] == "pending"
    assert execute(human_store.resume_queue(world.human, world.team.id, "default")) is True
    assert execute(agent_store.claim_next(world.agent)).todo.id == todo_id


@pytest.mark.parametrize("by_id", [False, True], ids=["claim_next", "claim"])
def test_a_takeover_of_a_lapsed_lease_closes_the_old_attempt_lease_expired(agent, by_id):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id, claimant="dead worker"))
    lapse(todo_id)
    claim = execute(agent_store.claim(agent, todo_id) if by_id else agent_store.claim_next(agent))
    assert claim.took_over is True and claim.attempt_seq == 2
    r = row(todo_id)
    assert (r["state"], r["attempt"], r["attempts_total"]) == ("claimed", 2, 2)
    old, new_attempt = attempts(todo_id)
    assert (old["outcome"], old["disposition"]) == ("lease_expired", "requeued")
    assert old["ended_at"] == r["claimed_at"]  # closed by the same statement
    assert new_attempt["seq"] == 2 and new_attempt["ended_at"] is None
    assert [p.seq for p in claim.prior_attempts] == [1]
    assert claim.prior_attempts[0].died and claim.prior_attempts[0].claimant == "dead worker"


def test_a_lapsed_lease_with_its_budget_spent_is_not_taken_over(agent):
    todo_id = new(agent, max_attempts=1)
    execute(agent_store.claim(agent, todo_id))
    lapse(todo_id)
    assert execute(agent_store.claim_next(agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, todo_id))
    assert row(todo_id)["attempts_total"] == 1


def test_claim_of_a_due_retry_clears_the_window_and_closes_nothing(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.fail(agent, todo_id, summary="flaky"))
    assert execute(agent_store.claim_next(agent)) is None  # the window is still open
    make_due(todo_id)
    claim = execute(agent_store.claim_next(agent))
    assert claim.todo.id == todo_id and claim.took_over is False
    r = row(todo_id)
    assert (r["state"], r["attempt"], r["next_retry_at"]) == ("claimed", 2, None)
    first, second = attempts(todo_id)
    assert (first["outcome"], first["disposition"], first["summary"]) == ("failed", "retry_scheduled", "flaky")
    assert second["ended_at"] is None
    assert [p.outcome for p in claim.prior_attempts] == ["failed"]


def test_heartbeat_extends_the_lease_and_stamps_the_open_attempt(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id, lease_ttl_seconds=30))
    todo = execute(agent_store.heartbeat(agent, todo_id, lease_ttl_seconds=600))
    r = row(todo_id)
    assert todo.lease_expires_at == r["lease_expires_at"]
    assert r["lease_expires_at"] - r["updated_at"] == timedelta(seconds=600)
    [a] = attempts(todo_id)
    assert a["ended_at"] is None and a["last_heartbeat_at"] == r["updated_at"]
    assert a["lease_expires_at"] == r["lease_expires_at"]


def test_complete_finishes_the_todo_and_closes_the_attempt_completed_done(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    todo = execute(
        agent_store.complete(
            agent, todo_id, result={"ok": True}, summary="all good", artifact="https://ci.example/run/1"
        )
    )
    r = row(todo_id)
    assert todo.state == "done" and r["result"] == {"ok": True}
    assert (r["owner"], r["lease_expires_at"], r["next_retry_at"]) == (None, None, None)
    assert r["completed_at"] == r["updated_at"]
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"]) == ("completed", "done")
    assert (a["summary"], a["summary_truncated"], a["artifact"]) == ("all good", False, "https://ci.example/run/1")
    assert a["ended_at"] == r["completed_at"]


def test_fail_below_the_cap_schedules_a_retry(agent):
    todo_id = new(agent, max_attempts=2)
    execute(agent_store.claim(agent, todo_id))
    todo = execute(
        agent_store.fail(agent, todo_id, result={"error": "boom"}, summary="it broke", artifact="mcp://store/x1")
    )
    r = row(todo_id)
    assert todo.retry_scheduled and not todo.dead_letter
    assert (r["state"], r["result"], r["owner"], r["lease_expires_at"], r["completed_at"]) == (
        "failed",
        {"error": "boom"},
        None,
        None,
        None,
    )
    assert r["next_retry_at"] - r["updated_at"] == timedelta(seconds=30)
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"], a["summary"], a["artifact"]) == (
        "failed",
        "retry_scheduled",
        "it broke",
        "mcp://store/x1",
    )


def test_fail_at_the_cap_dead_letters(agent):
    todo_id = new(agent, max_attempts=1)
    execute(agent_store.claim(agent, todo_id))
    todo = execute(agent_store.fail(agent, todo_id, result={"error": "fatal"}))
    r = row(todo_id)
    assert todo.dead_letter
    assert (r["state"], r["next_retry_at"]) == ("failed", None)
    assert r["completed_at"] == r["updated_at"]
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"]) == ("failed", "dead_lettered")


def test_release_requeues_and_keeps_the_attempt_count(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    todo = execute(agent_store.release(agent, todo_id, summary="not for me"))
    r = row(todo_id)
    assert todo.state == "pending"
    assert (r["state"], r["owner"], r["lease_expires_at"], r["attempt"], r["attempts_total"]) == (
        "pending",
        None,
        None,
        1,
        1,
    )
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"], a["summary"]) == ("released", "requeued", "not for me")
    # and it is claimable again, as attempt 2 with seq 2
    claim = execute(agent_store.claim_next(agent))
    assert (claim.todo.id, claim.todo.attempt, claim.attempt_seq) == (todo_id, 2, 2)


def test_reports_after_the_lease_ended_are_conflicts(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.complete(agent, todo_id))
    for stmt in (
        agent_store.complete(agent, todo_id),
        agent_store.fail(agent, todo_id),
        agent_store.release(agent, todo_id),
        agent_store.heartbeat(agent, todo_id),
    ):
        with pytest.raises(Conflict):
            execute(stmt)
    assert row(todo_id)["state"] == "done"


def test_another_endpoint_of_the_team_cannot_report_on_the_lease(world):
    todo_id = new(world.sibling)
    execute(agent_store.claim(world.sibling, todo_id))
    # world.agent does not even see the sibling's todo
    from todos.core.store import NotFound

    with pytest.raises(NotFound):
        execute(agent_store.complete(world.agent, todo_id))
    assert row(todo_id)["state"] == "claimed"


def test_claim_batch_leases_up_to_max_in_claim_order(agent):
    ids = [new(agent, title=f"t{i}") for i in range(5)]
    claims = execute(agent_store.claim_batch(agent, max=3, require_fence=True, claimant="batcher"))
    assert [c.todo.id for c in claims] == ids[:3]
    assert len({c.lease_token for c in claims}) == 3
    for c in claims:
        [a] = attempts(c.todo.id)
        assert a["claimant"] == "batcher" and a["lease_token_hash"] is not None
        # each todo got its own token: the right one completes it
    for c in reversed(claims):
        execute(agent_store.complete(agent, c.todo.id, lease_token=c.lease_token))
    assert [c.todo.id for c in execute(agent_store.claim_batch(agent, max=10))] == ids[3:]


def test_complete_batch_applies_each_item_and_classifies_each_miss(world):
    agent = world.agent
    a, b, c = (new(agent) for _ in range(3))
    foreign = new(world.foreign_agent)
    out_of_scope = new(agent, queue="third")
    narrowed = dataclasses.replace(agent, queues=("default",))
    claim_a = execute(agent_store.claim(agent, a, require_fence=True))
    execute(agent_store.claim(agent, b))
    results = execute(
        agent_store.complete_batch(
            narrowed,
            [
                {"id": a, "lease_token": claim_a.lease_token, "result": {"n": 1}, "summary": "one"},
                {"id": b, "result": {"n": 2}},
                {"id": c},
                {"id": foreign},
                {"id": "td_nope"},
                {"id": out_of_scope},
            ],
        )
    )
    assert [r.ok for r in results] == [True, True, False, False, False, False]
    assert [r.error.code for r in results[2:]] == ["conflict", "not_found", "not_found", "forbidden"]
    assert row(a)["result"] == {"n": 1} and row(b)["state"] == "done" and row(c)["state"] == "pending"
    assert [(x["outcome"], x["disposition"], x["summary"]) for x in attempts(a)] == [("completed", "done", "one")]


def test_every_update_moves_updated_at(agent):
    todo_id = new(agent)
    stamps = [row(todo_id)["updated_at"]]
    for stmt in (
        agent_store.claim(agent, todo_id),
        agent_store.heartbeat(agent, todo_id),
        agent_store.release(agent, todo_id),
    ):
        execute(stmt)
        stamps.append(row(todo_id)["updated_at"])
    assert stamps == sorted(set(stamps))
    assert db_now() >= stamps[-1]


def test_seq_keeps_increasing_across_claims(agent):
    todo_id = new(agent, max_attempts=10)
    for _ in range(4):
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.release(agent, todo_id))
    assert [a["seq"] for a in attempts(todo_id)] == [1, 2, 3, 4]
    assert [a["attempt"] for a in attempts(todo_id)] == [1, 2, 3, 4]
    assert sql("SELECT count(*) AS n FROM todo_attempts WHERE ended_at IS NULL")[0]["n"] == 0

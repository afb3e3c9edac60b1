"""The sweeps: reaper, due-retry requeue, retention, and the endpoint revocation/expiry that
dead-letters live work."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests import factories
from tests.store.helpers import age_completion, attempts, audit, db_now, lapse, make_due, row, sql
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store


def new(agent, **kw) -> str:
    kw.setdefault("queue", "default")
    return execute(agent_store.create(agent, title="t", **kw)).todo.id


def claimed(agent, **kw) -> str:
    todo_id = new(agent, **kw)
    execute(agent_store.claim(agent, todo_id))
    return todo_id


# --- reap -------------------------------------------------------------------------------------


def test_reap_requeues_a_lapsed_lease_and_closes_its_attempt_reaped(agent):
    lapsed = claimed(agent)
    live = claimed(agent)
    lapse(lapsed)
    out = execute(background_store.reap())
    assert out.ids == (lapsed,) and out.count == 1
    r = row(lapsed)
    assert (r["state"], r["owner"], r["lease_expires_at"], r["attempt"], r["completed_at"]) == (
        "pending",
        None,
        None,
        1,
        None,
    )
    [a] = attempts(lapsed)
    assert (a["outcome"], a["disposition"]) == ("reaped", "requeued") and a["ended_at"] == r["updated_at"]
    assert row(live)["state"] == "claimed" and attempts(live)[0]["ended_at"] is None
    claim = execute(agent_store.claim_next(agent))
    assert claim.todo.id == lapsed and not claim.took_over and claim.prior_attempts[0].died


def test_reap_dead_letters_a_lease_whose_budget_is_spent(agent):
    todo_id = claimed(agent, max_attempts=1)
    lapse(todo_id)
    assert execute(background_store.reap()).ids == (todo_id,)
    r = row(todo_id)
    assert (r["state"], r["next_retry_at"]) == ("failed", None)
    assert r["completed_at"] == r["updated_at"]
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"]) == ("reaped", "dead_lettered")


def test_reap_also_recovers_a_humans_lapsed_lease(world):
    todo_id = new(world.agent)
    execute(human_store.claim(world.human, todo_id))
    lapse(todo_id)
    assert execute(background_store.reap()).ids == (todo_id,)
    assert row(todo_id)["state"] == "pending"


def test_reap_takes_at_most_limit_rows_oldest_lapse_first(agent):
    ids = [claimed(agent) for _ in range(3)]
    for n, todo_id in enumerate(ids):
        lapse(todo_id, by=timedelta(minutes=10 - n))
    assert execute(background_store.reap(limit=2)).ids == tuple(ids[:2])
    assert execute(background_store.reap(limit=2)).ids == (ids[2],)
    assert execute(background_store.reap()).count == 0


def test_a_real_one_second_lease_lapses_on_the_database_clock(agent):
    import time

    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id, lease_ttl_seconds=1))
    assert execute(background_store.reap()).count == 0
    time.sleep(1.1)
    assert execute(background_store.reap()).ids == (todo_id,)


# --- requeue due retries ----------------------------------------------------------------------


def test_requeue_moves_due_retries_back_to_pending_keeping_the_attempt(agent):
    due = claimed(agent)
    execute(agent_store.fail(agent, due))
    waiting = claimed(agent)
    execute(agent_store.fail(agent, waiting))
    dead = claimed(agent, max_attempts=1)
    execute(agent_store.fail(agent, dead))
    make_due(due)
    out = execute(background_store.requeue_due_retries())
    assert out.ids == (due,)
    r = row(due)
    assert (r["state"], r["next_retry_at"], r["attempt"]) == ("pending", None, 1)
    assert [a["outcome"] for a in attempts(due)] == ["failed"]  # no attempt row changes
    assert row(waiting)["state"] == "failed" and row(waiting)["next_retry_at"] is not None
    assert row(dead)["state"] == "failed"
    assert execute(background_store.requeue_due_retries()).count == 0


# --- retention --------------------------------------------------------------------------------


def test_purge_deletes_old_terminal_todos_with_their_attempts(world):
    agent = world.agent
    done = claimed(agent)
    execute(agent_store.complete(agent, done))
    dead = claimed(agent, max_attempts=1)
    execute(agent_store.fail(agent, dead))
    canceled = new(agent)
    execute(human_store.cancel(world.human, canceled))
    recent_done = claimed(agent)
    execute(agent_store.complete(agent, recent_done))
    retrying = claimed(agent)
    execute(agent_store.fail(agent, retrying))
    live = [new(agent), claimed(agent), retrying]
    for todo_id in (done, dead, canceled):
        age_completion(todo_id, 31)
    sql("UPDATE todos SET created_at = now() - interval '90 days' WHERE id = ANY(%s)", (live,))

    out = execute(background_store.purge_terminal(older_than_days=30))
    assert sorted(out.ids) == sorted([done, dead, canceled])
    for todo_id in (done, dead, canceled):
        assert row(todo_id) is None and attempts(todo_id) == []
    assert len(audit(canceled)) == 1  # the audit trail outlives the todo
    for todo_id in live + [recent_done]:
        assert row(todo_id) is not None
    assert attempts(recent_done) != []


def test_purge_uses_the_retention_setting(agent, settings):
    settings.BOARD_RETENTION_DAYS = 7
    done = claimed(agent)
    execute(agent_store.complete(agent, done))
    age_completion(done, 6)
    assert execute(background_store.purge_terminal()).count == 0
    age_completion(done, 8)
    assert execute(background_store.purge_terminal()).ids == (done,)


def test_purge_walks_every_endpoint_and_stops_at_its_limit(world):
    """The sweep walks each endpoint's finished todos (``todos_endpoint_finished``): old ones of
    every endpoint go, at most ``limit`` per call, each once."""
    other = factories.agent(factories.endpoint(world.team, slug="other-purge", queues=("default",)))
    old = []
    for agent in (world.agent, other, world.agent, other):
        todo_id = claimed(agent)
        execute(agent_store.complete(agent, todo_id))
        age_completion(todo_id, 31)
        old.append(todo_id)
    first = execute(background_store.purge_terminal(limit=3, older_than_days=30)).ids
    second = execute(background_store.purge_terminal(limit=3, older_than_days=30)).ids
    assert len(first) == 3 and len(second) == 1 and sorted(first + second) == sorted(old)
    assert execute(background_store.purge_terminal(limit=3, older_than_days=30)).count == 0


# --- revoke and expiry ------------------------------------------------------------------------


def _live_work(agent):
    pending = new(agent)
    held = claimed(agent)
    retrying = claimed(agent)
    execute(agent_store.fail(agent, retrying))
    done = claimed(agent)
    execute(agent_store.complete(agent, done))
    return pending, held, retrying, done


def assert_dead_lettered_by_revoke(todo_ids, slug):
    for todo_id in todo_ids:
        r = row(todo_id)
        assert (r["state"], r["next_retry_at"], r["owner"], r["lease_expires_at"]) == ("failed", None, None, None)
        assert r["result"]["error"] == "endpoint_revoked" and r["result"]["endpoint"] == slug
        assert r["completed_at"] == r["updated_at"]


def test_revoke_dead_letters_the_endpoints_live_todos(world):
    agent = world.agent
    pending, held, retrying, done = _live_work(agent)
    other = new(world.sibling)
    revoked = execute(endpoint_store.revoke(world.admin, agent.endpoint_id, note="leaked"))
    assert revoked.endpoint.state == "revoked" and revoked.endpoint.revoked_at is not None
    assert sorted(revoked.dead_lettered) == sorted([pending, held, retrying])
    assert_dead_lettered_by_revoke([pending, held, retrying], "worker")
    assert [(a["outcome"], a["disposition"]) for a in attempts(held)] == [("revoked", "dead_lettered")]
    assert [a["outcome"] for a in attempts(retrying)] == ["failed"]
    assert row(done)["state"] == "done" and row(other)["state"] == "pending"
    [entry] = [r for r in audit() if r["action"] == "endpoint.revoke"]
    assert (entry["user_id"], entry["note"], entry["detail"]) == (world.admin.user_id, "leaked", {"dead_lettered": 3})
    with pytest.raises(Conflict):
        execute(endpoint_store.revoke(world.admin, agent.endpoint_id))


def test_revoke_needs_a_team_admin(world):
    for who, error in ((world.human, Forbidden), (world.viewer, Forbidden), (world.outsider, NotFound)):
        with pytest.raises(error):
            execute(endpoint_store.revoke(who, world.agent.endpoint_id))
    with pytest.raises(NotFound):
        execute(endpoint_store.revoke(world.admin, "00000000-0000-0000-0000-000000000000"))
    assert sql("SELECT state FROM endpoints WHERE id = %s", (world.agent.endpoint_id,))[0]["state"] == "active"


def test_expire_due_revokes_endpoints_whose_lifetime_ended(world):
    expiring = factories.endpoint(world.team, slug="temp", expires_at=db_now() + timedelta(seconds=60))
    scope = factories.agent(expiring)
    pending, held, retrying, done = _live_work(scope)
    lasting = new(world.agent)
    assert execute(endpoint_store.expire_due()) == []
    sql("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = %s", (scope.endpoint_id,))
    [out] = execute(endpoint_store.expire_due())
    assert out.endpoint.id == scope.endpoint_id and out.endpoint.state == "revoked"
    assert sorted(out.dead_lettered) == sorted([pending, held, retrying])
    assert_dead_lettered_by_revoke([pending, held, retrying], "temp")
    assert [(a["outcome"], a["disposition"]) for a in attempts(held)] == [("revoked", "dead_lettered")]
    assert row(done)["state"] == "done" and row(lasting)["state"] == "pending"
    [entry] = [r for r in audit() if r["action"] == "endpoint.expire"]
    assert (entry["user_id"], entry["actor"], entry["detail"]) == (None, "system", {"dead_lettered": 3})
    assert execute(endpoint_store.expire_due()) == []


def test_reaper_dead_letters_a_lapsed_lease_of_a_revoked_endpoint(store_db):
    """A claim that raced a revoke leaves a lease on a revoked endpoint; when it lapses the
    reaper must not put the work back where no agent can ever claim it."""
    from todos.core import db

    team = factories.team()
    vended = factories.endpoint(team)
    ep = factories.agent(vended)
    todo = execute(agent_store.create(ep, queue="default", title="raced", max_attempts=5)).todo
    execute(agent_store.claim(ep, todo.id))
    with db.connect() as conn:  # the state a claim racing the revoke leaves behind
        conn.execute("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE id = %s", [vended.endpoint.id])
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", [todo.id])
    assert execute(background_store.reap()).ids == (todo.id,)
    with db.connect() as conn:
        row = conn.execute("SELECT state, next_retry_at FROM todos WHERE id = %s", [todo.id]).fetchone()
        attempt = conn.execute(
            "SELECT outcome, disposition FROM todo_attempts WHERE todo_id = %s", [todo.id]
        ).fetchone()
    assert row == {"state": "failed", "next_retry_at": None}
    assert attempt == {"outcome": "reaped", "disposition": "dead_lettered"}

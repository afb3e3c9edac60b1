"""Concurrency with real threads, each on its own PostgreSQL connection, released together by a
barrier. The store's guarantees must hold under every interleaving the threads find."""

from __future__ import annotations

import psycopg
import pytest

from tests.store.helpers import attempts, behind, lapse, open_attempts, row, run_threads, sql
from todos.core import db
from todos.core.db import Statement, execute
from todos.core.store import Conflict, Internal
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store


def new(agent, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title="t", **kw)).todo.id


def on_own_connection(build):
    """A thread body: build the statement, wait for everyone, run it on a dedicated connection."""

    def work(i, barrier):
        with db.connect() as conn:
            stmt = build(i)
            barrier.wait()
            return execute(stmt, conn)

    return work


@pytest.mark.parametrize("queue", [None, "default"], ids=["across-queues", "one-queue"])
def test_concurrent_claim_next_never_hands_out_a_todo_twice(agent, queue):
    ids = {new(agent) for _ in range(12)}
    claims = run_threads(12, on_own_connection(lambda i: agent_store.claim_next(agent, queue=queue, claimant=f"w{i}")))
    assert not [c for c in claims if isinstance(c, BaseException)]
    assert {c.todo.id for c in claims} == ids
    for todo_id in ids:
        assert len(attempts(todo_id)) == 1
    assert execute(agent_store.claim_next(agent)) is None


def test_concurrent_claimers_over_several_queues_all_get_work(agent):
    """A claim_next over all scoped queues must lock only the row it takes: a claimer that held
    every queue's head made the others skip them and come back empty while work waited."""
    for _ in range(3):
        ids = {new(agent, queue=q) for q in ("default", "other", "third") for _ in range(4)}
        claims = run_threads(12, on_own_connection(lambda i: agent_store.claim_next(agent)))
        assert not [c for c in claims if isinstance(c, BaseException)]
        assert [c for c in claims if c is None] == []
        assert {c.todo.id for c in claims} == ids
        for c in claims:
            execute(agent_store.complete(agent, c.todo.id))


def test_concurrent_batch_claims_share_out_the_work(agent):
    ids = {new(agent, queue=q) for q in ("default", "other") for _ in range(15)}
    batches = run_threads(3, on_own_connection(lambda i: agent_store.claim_batch(agent, max=10)))
    assert not [b for b in batches if isinstance(b, BaseException)]
    claimed = [c.todo.id for b in batches for c in b]
    assert len(claimed) == len(set(claimed)) == 30 and set(claimed) == ids


def test_concurrent_batch_claims_in_one_queue_share_out_the_work(agent):
    ids = {new(agent) for _ in range(30)}
    batches = run_threads(3, on_own_connection(lambda i: agent_store.claim_batch(agent, max=10, queue="default")))
    assert not [b for b in batches if isinstance(b, BaseException)]
    claimed = [c.todo.id for b in batches for c in b]
    assert len(claimed) == len(set(claimed)) == 30 and set(claimed) == ids


@pytest.mark.parametrize("queue", [None, "default"], ids=["across-queues", "one-queue"])
def test_more_claimers_than_work_get_nothing_rather_than_a_shared_todo(agent, queue):
    ids = {new(agent) for _ in range(4)}
    claims = run_threads(10, on_own_connection(lambda i: agent_store.claim_next(agent, queue=queue)))
    got = [c for c in claims if c is not None]
    assert not [c for c in got if isinstance(c, BaseException)]
    assert sorted(c.todo.id for c in got) == sorted(ids)


def test_concurrent_claims_of_one_id_have_exactly_one_winner(agent):
    todo_id = new(agent)
    outcomes = run_threads(8, on_own_connection(lambda i: agent_store.claim(agent, todo_id, claimant=f"w{i}")))
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(winners) == 1 and len(losers) == 7
    assert all(isinstance(o, Conflict) for o in losers)
    [a] = attempts(todo_id)
    assert a["seq"] == 1 and a["ended_at"] is None
    assert row(todo_id)["attempts_total"] == 1


def test_concurrent_takeovers_of_one_lapsed_lease_have_exactly_one_winner(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    lapse(todo_id)
    outcomes = run_threads(6, on_own_connection(lambda i: agent_store.claim(agent, todo_id, require_fence=True)))
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(winners) == 1 and winners[0].took_over
    assert all(isinstance(o, Conflict) for o in outcomes if isinstance(o, BaseException))
    old, new_attempt = attempts(todo_id)
    assert (old["outcome"], new_attempt["ended_at"]) == ("lease_expired", None)


def test_the_reaper_racing_a_takeover_closes_the_old_attempt_exactly_once(agent):
    """Whoever locks the lapsed row first changes it; the other's predicate no longer matches.
    The reaper wins → ``reaped`` and the claim finds a pending todo; the claimer wins → the
    claim closes it ``lease_expired`` and the reaper skips the row."""
    seen = set()
    for _ in range(30):
        todo_id = new(agent)
        execute(agent_store.claim(agent, todo_id, claimant="dead"))
        lapse(todo_id)

        def work(i, barrier, todo_id=todo_id):
            with db.connect() as conn:
                stmt = background_store.reap() if i == 0 else agent_store.claim(agent, todo_id, claimant="taker")
                barrier.wait()
                return execute(stmt, conn)

        reaped, claim = run_threads(2, work)
        assert not isinstance(reaped, BaseException) and not isinstance(claim, BaseException), (reaped, claim)
        old, current = attempts(todo_id)
        assert current["ended_at"] is None and current["claimant"] == "taker" and current["seq"] == 2
        if todo_id in reaped.ids:
            assert (old["outcome"], old["disposition"], claim.took_over) == ("reaped", "requeued", False)
        else:
            assert (old["outcome"], old["disposition"], claim.took_over) == ("lease_expired", "requeued", True)
        seen.add(old["outcome"])
        r = row(todo_id)
        assert (r["state"], r["attempt"], r["attempts_total"]) == ("claimed", 2, 2)
    assert seen  # which interleavings occur is up to the scheduler; each one was checked


def test_a_holder_completing_while_its_lapsed_lease_is_taken_over(agent):
    """The holder's fenced complete and a takeover race: exactly one of them applies."""
    for _ in range(15):
        todo_id = new(agent)
        first = execute(agent_store.claim(agent, todo_id, require_fence=True))
        lapse(todo_id)

        def work(i, barrier, todo_id=todo_id, token=first.lease_token):
            with db.connect() as conn:
                stmt = (
                    agent_store.complete(agent, todo_id, lease_token=token)
                    if i == 0
                    else agent_store.claim(agent, todo_id, require_fence=True)
                )
                barrier.wait()
                return execute(stmt, conn)

        completed, taken = run_threads(2, work)
        applied = [o for o in (completed, taken) if not isinstance(o, BaseException)]
        assert len(applied) == 1, (completed, taken)
        assert isinstance(completed if applied[0] is taken else taken, Conflict)
        r = row(todo_id)
        if applied[0] is completed:
            assert r["state"] == "done" and [a["outcome"] for a in attempts(todo_id)] == ["completed"]
        else:
            assert r["state"] == "claimed" and [a["outcome"] for a in attempts(todo_id)] == ["lease_expired", None]


def test_two_reapers_close_each_lapsed_attempt_once(agent):
    ids = []
    for _ in range(40):
        todo_id = new(agent)
        execute(agent_store.claim(agent, todo_id))
        ids.append(todo_id)
    sql("UPDATE todos SET lease_expires_at = now() - interval '1 minute' WHERE state = 'claimed'")
    outcomes = run_threads(2, on_own_connection(lambda i: background_store.reap(limit=25)))
    assert not [o for o in outcomes if isinstance(o, BaseException)]
    swept = [i for o in outcomes for i in o.ids]
    assert len(swept) == len(set(swept))
    swept += execute(background_store.reap()).ids  # whatever both skipped
    assert sorted(swept) == sorted(ids)
    for todo_id in ids:
        [a] = attempts(todo_id)
        assert (a["outcome"], a["disposition"]) == ("reaped", "requeued")
        assert row(todo_id)["state"] == "pending"


def test_a_planted_second_open_attempt_fails_at_commit(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    plant = """INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, owner, lease_expires_at)
               VALUES (%(id)s, 99, 1, 'endpoint', 'endpoint:x', now() + interval '1 minute')"""
    with db.connect(autocommit=False) as conn:
        conn.execute(plant, {"id": todo_id})  # deferred: the INSERT itself passes
        with pytest.raises(psycopg.errors.ExclusionViolation) as info:
            conn.commit()
    assert info.value.diag.constraint_name == "todo_attempts_one_open"
    assert len(attempts(todo_id)) == 1

    with pytest.raises(Internal) as info:
        execute(Statement(plant, {"id": todo_id}, lambda rows: rows))
    assert info.value.code == "internal" and todo_id in info.value.message
    assert len(attempts(todo_id)) == 1


def test_execute_maps_a_lost_race_on_the_dedupe_index_to_conflict(agent):
    """The store's statements guard the key; a write that still hits the index (a create that
    committed between a statement's snapshot and its write) is a conflict, not a crash."""
    first = execute(agent_store.create(agent, queue="default", title="t", idempotency_key="k")).todo
    dup = """INSERT INTO todos (id, endpoint_id, queue, title, idempotency_key)
             VALUES ('td_dup', %(ep)s, 'default', 't', 'k')"""
    with pytest.raises(Conflict):
        execute(Statement(dup, {"ep": agent.endpoint_id}, lambda rows: rows))
    assert sql("SELECT id FROM todos") == [{"id": first.id}]


def test_execute_runs_a_stale_snapshot_statement_again_a_bounded_number_of_times():
    from todos.core.store import StaleSnapshot

    runs = []

    def finish(rows):
        runs.append(rows)
        if len(runs) < 2:
            raise StaleSnapshot("not yet visible")
        return "ok"

    assert execute(Statement("SELECT 1 AS one", {}, finish)) == "ok" and len(runs) == 2

    def never(rows):
        runs.append(rows)
        raise StaleSnapshot("never visible")

    runs.clear()
    with pytest.raises(Conflict):
        execute(Statement("SELECT 1 AS one", {}, never))
    assert len(runs) == db.STALE_SNAPSHOT_RUNS


# --- forced interleavings: a statement waits on the row lock of one that then commits ----------


def test_a_cancel_waiting_behind_a_claim_is_a_conflict_not_a_lost_attempt(world):
    """The cancel's snapshot predates the claim, so it cannot see (and close) the attempt the
    claim opened. It must not cancel the todo and leave that attempt open."""
    todo_id = new(world.agent)
    claim, cancel = behind(agent_store.claim(world.agent, todo_id), human_store.cancel(world.human, todo_id))
    assert isinstance(cancel, Conflict), cancel
    assert row(todo_id)["state"] == "claimed" and len(open_attempts(todo_id)) == 1
    execute(human_store.cancel(world.human, todo_id))  # with the claim in view, the cancel goes through
    assert row(todo_id)["state"] == "canceled" and open_attempts(todo_id) == []


def test_a_force_release_waiting_behind_a_takeover_is_a_conflict(world):
    todo_id = new(world.agent)
    execute(agent_store.claim(world.agent, todo_id))
    lapse(todo_id)
    taken, released = behind(agent_store.claim(world.agent, todo_id), human_store.force_release(world.human, todo_id))
    assert taken.took_over and isinstance(released, Conflict), released
    assert row(todo_id)["state"] == "claimed" and [a["seq"] for a in open_attempts(todo_id)] == [2]


def test_a_human_report_waiting_behind_their_own_reclaim_is_a_conflict(world):
    todo_id = new(world.agent)
    execute(human_store.claim(world.human, todo_id))
    lapse(todo_id)
    for verb in ("complete", "release", "fail", "extend"):
        reclaimed, report = behind(
            human_store.claim(world.human, todo_id), getattr(human_store, verb)(world.human, todo_id)
        )
        assert reclaimed.took_over and isinstance(report, Conflict), (verb, report)
        assert row(todo_id)["state"] == "claimed" and len(open_attempts(todo_id)) == 1
        lapse(todo_id)


def test_an_unfenced_agent_report_waiting_behind_a_takeover_is_a_conflict(agent):
    """Two workers of one endpoint share the owner string; without a fence only the attempt
    number the report saw tells them apart."""
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    lapse(todo_id)
    taken, completed = behind(agent_store.claim(agent, todo_id), agent_store.complete(agent, todo_id))
    assert taken.took_over and isinstance(completed, Conflict), completed
    assert row(todo_id)["state"] == "claimed"


def test_a_bulk_cancel_waiting_behind_a_claim_skips_it(world):
    todo_id = new(world.agent)
    other = new(world.agent)
    _, out = behind(agent_store.claim(world.agent, todo_id), human_store.cancel_many(world.human, [todo_id, other]))
    assert out.changed == (other,) and out.skipped == (todo_id,)
    assert row(todo_id)["state"] == "claimed" and len(open_attempts(todo_id)) == 1


def test_a_revoke_waiting_behind_a_claim_leaves_no_open_attempt_behind(world):
    todo_id = new(world.agent)
    _, revoked = behind(
        agent_store.claim(world.agent, todo_id), endpoint_store.revoke(world.admin, world.agent.endpoint_id)
    )
    assert not isinstance(revoked, BaseException), revoked
    # the claim it could not see is left to its lease (the agent's token no longer works)
    assert revoked.dead_lettered == () and revoked.endpoint.state == "revoked"
    assert row(todo_id)["state"] == "claimed" and len(open_attempts(todo_id)) == 1


def test_a_claim_waiting_behind_the_reaper_takes_the_requeued_todo(agent):
    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    lapse(todo_id)
    reaped, claim = behind(background_store.reap(), agent_store.claim(agent, todo_id))
    assert reaped.ids == (todo_id,) and not claim.took_over
    assert [(a["outcome"], a["disposition"]) for a in attempts(todo_id)] == [("reaped", "requeued"), (None, None)]


def test_aexecute_classifies_and_reruns_like_execute(agent):
    """The async executor shares the sync one's error mapping and its stale-snapshot re-run."""
    import asyncio

    from todos.core.store import StaleSnapshot

    todo_id = new(agent)
    execute(agent_store.claim(agent, todo_id))
    plant = """INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, owner, lease_expires_at)
               VALUES (%(id)s, 99, 1, 'endpoint', 'endpoint:x', now() + interval '1 minute')"""
    runs = []

    def stale_once(rows):
        runs.append(rows)
        if len(runs) == 1:
            raise StaleSnapshot("not yet visible")
        return rows[0]["one"]

    async def scenario():
        conn = await db.aconnect()
        try:
            with pytest.raises(Internal):
                await db.aexecute(Statement(plant, {"id": todo_id}, lambda rows: rows), conn)
            assert await db.aexecute(Statement("SELECT 1 AS one", {}, stale_once), conn) == 1
            created = await db.aexecute(
                agent_store.create(agent, queue="default", title="a", idempotency_key="k"), conn
            )
            again = await db.aexecute(agent_store.create(agent, queue="default", title="a", idempotency_key="k"), conn)
            assert created.created and not again.created and again.todo.id == created.todo.id
        finally:
            await conn.close()

    asyncio.run(scenario())
    assert len(runs) == 2 and len(attempts(todo_id)) == 1

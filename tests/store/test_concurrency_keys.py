"""Concurrency keys: at most ``max_claimed`` (default 1) todos of a team with one key
are claimed at once, whatever the number of claimers; claims skip a key at its limit and take
the key's next todo as soon as a slot frees."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.store.helpers import audit, lapse, one, run_threads, sql
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import concurrency as concurrency_store
from todos.core.store import human as human_store


def new(agent, key=None, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title="t", concurrency_key=key, **kw)).todo.id


def slots(team_id, key) -> dict | None:
    rows = sql("SELECT * FROM concurrency_keys WHERE team_id = %s AND key = %s", (team_id, key))
    return rows[0] if rows else None


@contextmanager
def watching_limits(limits: dict[str, int]) -> Iterator[list]:
    """A monitor thread sampling the database every 2 ms while the block runs; yields the list
    of every (key, claimed) it saw over the key's limit."""
    stop = threading.Event()
    over: list = []

    def monitor() -> None:
        with db.connect() as conn:
            while not stop.is_set():
                rows = conn.execute(
                    """SELECT t.concurrency_key AS key, count(*) AS n FROM todos t
                       WHERE t.state = 'claimed' AND t.concurrency_key IS NOT NULL GROUP BY 1"""
                ).fetchall()
                over.extend(r for r in rows if r["n"] > limits[r["key"]])
                time.sleep(0.002)

    watcher = threading.Thread(target=monitor)
    watcher.start()
    try:
        yield over
    finally:
        stop.set()
        watcher.join()


def waited_in_vain(idle_since: float | None) -> float:
    """Between empty claims: the moment the worker first came back empty. Fails the test when
    that was 20 s ago while work remained (a starved key)."""
    idle_since = idle_since or time.monotonic()
    assert time.monotonic() - idle_since < 20, "work starved"
    return idle_since


def all_done() -> bool:
    return one("SELECT count(*) AS n FROM todos WHERE state <> 'done'")["n"] == 0


def test_a_key_at_its_limit_is_skipped_and_its_next_todo_goes_as_soon_as_it_frees(agent):
    first, second = new(agent, "deploy:prod"), new(agent, "deploy:prod")
    free = new(agent)
    claim = execute(agent_store.claim_next(agent))
    assert claim.todo.id == first and claim.todo.concurrency_key == "deploy:prod"
    assert slots(agent.team_id, "deploy:prod")["claimed"] == 1
    # the key is busy: the next claim skips its todo (no head-of-line blocking) …
    assert execute(agent_store.claim_next(agent)).todo.id == free
    assert execute(agent_store.claim_next(agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, second))
    # … and takes it once the slot is given back
    execute(agent_store.complete(agent, first))
    assert slots(agent.team_id, "deploy:prod")["claimed"] == 0
    assert execute(agent_store.claim_next(agent)).todo.id == second


@pytest.mark.parametrize("finish", ["complete", "fail", "release", "reap", "cancel", "force_release", "revoke"])
def test_every_way_out_of_claimed_gives_the_slot_back(world, agent, human, finish):
    todo = new(agent, "k", max_attempts=5)
    execute(agent_store.claim_next(agent))
    if finish == "complete":
        execute(agent_store.complete(agent, todo))
    elif finish == "fail":
        execute(agent_store.fail(agent, todo))
    elif finish == "release":
        execute(agent_store.release(agent, todo))
    elif finish == "reap":
        lapse(todo)
        execute(background_store.reap())
    elif finish == "cancel":
        execute(human_store.cancel(human, todo))
    elif finish == "force_release":
        execute(human_store.force_release(human, todo))
    elif finish == "revoke":
        from todos.core.store import endpoints as endpoint_store

        execute(endpoint_store.revoke(world.admin, agent.endpoint_id))
    assert slots(agent.team_id, "k")["claimed"] == 0


def test_a_takeover_keeps_the_slot_of_the_lapsed_holder(agent):
    todo = new(agent, "k")
    execute(agent_store.claim_next(agent))
    lapse(todo)
    took = execute(agent_store.claim_next(agent))
    assert took.took_over and took.todo.id == todo
    assert slots(agent.team_id, "k")["claimed"] == 1


def test_keys_are_per_team(world, agent):
    mine = new(agent, "shared")
    theirs = new(world.foreign_agent, "shared")
    assert execute(agent_store.claim_next(agent)).todo.id == mine
    assert execute(agent_store.claim_next(world.foreign_agent)).todo.id == theirs


def test_a_batch_takes_one_todo_per_key_at_limit_one(agent):
    ids = [new(agent, "a"), new(agent, "a"), new(agent, "b"), new(agent)]
    claims = execute(agent_store.claim_batch(agent, max=10))
    assert sorted(c.todo.id for c in claims) == sorted([ids[0], ids[2], ids[3]])


def test_a_batch_takes_as_many_todos_of_a_key_as_it_has_free_slots(agent, human):
    execute(concurrency_store.set_limit(human, agent.team_id, "pair", 2))
    ids = [new(agent, "pair") for _ in range(3)]
    claims = execute(agent_store.claim_batch(agent, max=10))
    assert sorted(c.todo.id for c in claims) == sorted(ids[:2])
    assert slots(agent.team_id, "pair")["claimed"] == 2


def test_a_batch_gives_no_slot_to_a_key_it_does_not_take(agent):
    """A takeover keeps its slot and an unkeyed todo needs none: a batch of both asks no key."""
    taken_over = new(agent, "held")
    execute(agent_store.claim_next(agent))
    lapse(taken_over)
    plain = new(agent)
    claims = execute(agent_store.claim_batch(agent, max=10))
    assert sorted(c.todo.id for c in claims) == sorted([taken_over, plain])
    assert slots(agent.team_id, "held")["claimed"] == 1


def test_a_higher_limit_lets_that_many_run(world, agent, human):
    ids = [new(agent, "wide") for _ in range(4)]
    limit = execute(concurrency_store.set_limit(human, agent.team_id, "wide", 3))
    assert (limit.max_claimed, limit.previous) == (3, None)
    taken = [execute(agent_store.claim_next(agent)) for _ in range(4)]
    assert [c.todo.id for c in taken if c] == ids[:3] and taken[3] is None
    entry = audit()[-1]
    assert entry["action"] == "concurrency.limit" and entry["detail"] == {"key": "wide", "old": None, "new": 3}
    lowered = execute(concurrency_store.set_limit(human, agent.team_id, "wide", 1))
    assert lowered.previous == 3 and lowered.claimed == 3  # running work is left alone
    execute(agent_store.complete(agent, ids[0]))
    assert execute(agent_store.claim_next(agent)) is None  # 2 still running, limit 1


@pytest.mark.parametrize(
    ("key", "limit", "field"), [("k", 0, "limit"), ("k", "2", "limit"), ("", 1, "key"), ("k" * 201, 1, "key")]
)
def test_bad_limits_are_refused_naming_the_field(agent, human, key, limit, field):
    with pytest.raises(Invalid) as exc:
        concurrency_store.set_limit(human, agent.team_id, key, limit)
    assert exc.value.field == field
    assert sql("SELECT count(*) AS n FROM concurrency_keys")[0]["n"] == 0


def test_only_members_who_act_set_limits(world, agent):
    with pytest.raises(Forbidden):
        execute(concurrency_store.set_limit(world.viewer, agent.team_id, "k", 2))
    with pytest.raises(NotFound):
        execute(concurrency_store.set_limit(world.outsider, agent.team_id, "k", 2))
    assert sql("SELECT count(*) AS n FROM concurrency_keys")[0]["n"] == 0
    by_system = execute(concurrency_store.set_limit(None, agent.team_id, "k", 2))
    assert by_system.max_claimed == 2 and audit()[-1]["actor"] == "system"


def test_concurrent_claimers_on_one_key_get_exactly_one(agent):
    for _ in range(10):
        new(agent, "single")

    def work(i, barrier):
        with db.connect() as conn:
            stmt = agent_store.claim_next(agent)
            barrier.wait()
            return execute(stmt, conn)

    claims = run_threads(10, work)
    assert not [c for c in claims if isinstance(c, BaseException)]
    assert len([c for c in claims if c is not None]) == 1
    assert one("SELECT count(*) AS n FROM todos WHERE state = 'claimed'")["n"] == 1


def test_many_workers_never_exceed_any_limit_and_every_todo_finishes(agent, human):
    """Eight real workers drain 60 keyed todos (6 keys, one with limit 2) and 20 unkeyed ones.
    Each worker counts what it holds per key; a monitor samples the database. Neither ever sees a
    key over its limit, and every todo is done: none starves once its key frees."""
    limits = {"k0": 1, "k1": 1, "k2": 1, "k3": 1, "k4": 1, "k5": 2}
    execute(concurrency_store.set_limit(human, agent.team_id, "k5", 2))
    ids = [new(agent, f"k{i % 6}") for i in range(60)] + [new(agent) for _ in range(20)]
    random.shuffle(ids)
    held: Counter = Counter()
    worst: Counter = Counter()
    guard = threading.Lock()

    def worker(i, barrier):
        done = 0
        with db.connect() as conn:
            barrier.wait()
            idle_since = None
            while True:
                claim = execute(agent_store.claim_next(agent, claimant=f"w{i}"), conn)
                if claim is None:
                    if all_done():
                        return done
                    idle_since = waited_in_vain(idle_since)
                    time.sleep(0.005)
                    continue
                idle_since = None
                key = claim.todo.concurrency_key
                if key:
                    with guard:
                        held[key] += 1
                        worst[key] = max(worst[key], held[key])
                time.sleep(random.uniform(0, 0.01))
                if key:
                    with guard:
                        held[key] -= 1  # before the slot is given back: the count never lags low
                execute(agent_store.complete(agent, claim.todo.id), conn)
                done += 1

    with watching_limits(limits) as sampled_over:
        outcomes = run_threads(8, worker, timeout=120)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert sum(outcomes) == len(ids)
    assert one("SELECT count(*) AS n FROM todos WHERE state = 'done'")["n"] == len(ids)
    assert all(worst[k] <= limits[k] for k in worst), worst
    assert worst["k5"] >= 1 and not sampled_over
    assert sql("SELECT key, claimed FROM concurrency_keys WHERE claimed <> 0") == []


def test_concurrent_batch_claims_over_many_keys_never_deadlock_or_exceed_a_limit(agent, human):
    """Six real workers take batches of up to five from 120 todos spread over 12 keys (two with
    limit 3), created in an order that puts the keys differently in every batch. Each batch asks
    its keys for slots in (team, key) order, so no two batches wait on each other's key rows in
    opposite orders: PostgreSQL never reports a deadlock, no key is ever over its limit, and
    everything finishes."""
    limits = {f"k{i:02}": (3 if i < 2 else 1) for i in range(12)}
    for key, limit in limits.items():
        if limit != 1:
            execute(concurrency_store.set_limit(human, agent.team_id, key, limit))
    order = list(range(120))
    random.shuffle(order)
    for i in order:
        new(agent, f"k{i % 12:02}")

    def worker(i, barrier):
        done = 0
        with db.connect() as conn:
            barrier.wait()
            idle_since = None
            while True:
                claims = execute(agent_store.claim_batch(agent, max=5, claimant=f"w{i}"), conn)
                if not claims:
                    if all_done():
                        return done
                    idle_since = waited_in_vain(idle_since)
                    time.sleep(0.005)
                    continue
                idle_since = None
                time.sleep(random.uniform(0, 0.005))
                execute(agent_store.complete_batch(agent, [{"id": c.todo.id} for c in claims]), conn)
                done += len(claims)

    with watching_limits(limits) as sampled_over:
        outcomes = run_threads(6, worker, timeout=120)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert sum(outcomes) == 120 and not sampled_over
    assert sql("SELECT key, claimed FROM concurrency_keys WHERE claimed <> 0") == []

"""Rate limits per key: at most N claims of a team's todos with one rate key in any window of the
interval's length, whatever the number of claimers; claims skip a throttled key's work."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from tests.store.helpers import audit, lapse, listening, one, run_threads, sql
from todos.agents.api.claim_refill import claim_next_or_refill
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid, NotFound, rate_limits
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def new(agent, rate_key=None, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title="t", rate_key=rate_key, **kw)).todo.id


def ring(team_id, key) -> dict | None:
    rows = sql("SELECT * FROM rate_limits WHERE team_id = %s AND key = %s", (team_id, key))
    return rows[0] if rows else None


def limit(world, key, n, per="second"):
    return execute(rate_limits.set_limit(world.admin, world.team.id, key, n, per))


def age_ring(team_id, key, by: timedelta) -> None:
    """Setup only: move the ring's claim times back, as if the interval had passed."""
    with db.connect() as conn:
        conn.execute(
            """UPDATE rate_limits SET taken = ARRAY(SELECT x - %(by)s FROM unnest(taken) x),
                                      refills_at = refills_at - %(by)s
               WHERE team_id = %(team)s AND key = %(key)s""",
            {"by": by, "team": team_id, "key": key},
        )


# --- claims ----------------------------------------------------------------------------------


def test_a_key_gives_n_claims_per_interval_and_skips_its_work_past_them(world, agent):
    limit(world, "crawl", 2, "hour")
    keyed = [new(agent, "crawl") for _ in range(3)]
    free = new(agent)
    first, second = execute(agent_store.claim_next(agent)), execute(agent_store.claim_next(agent))
    assert [first.todo.id, second.todo.id] == keyed[:2]
    assert first.todo.rate_key == "crawl"
    # the allowance is used up: the keyed todo is skipped, the unkeyed one behind it is claimed
    assert execute(agent_store.claim_next(agent)).todo.id == free
    assert execute(agent_store.claim_next(agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, keyed[2]))
    state = ring(world.team.id, "crawl")
    assert state["refills_at"] > one("SELECT now() AS n")["n"]
    # finishing work gives nothing back: only time does
    execute(agent_store.complete(agent, keyed[0]))
    assert execute(agent_store.claim_next(agent)) is None
    age_ring(world.team.id, "crawl", timedelta(hours=1))
    assert execute(agent_store.claim_next(agent)).todo.id == keyed[2]


def test_an_unconfigured_key_is_unlimited(agent):
    ids = [new(agent, "nobody-set-me") for _ in range(5)]
    assert [execute(agent_store.claim_next(agent)).todo.id for _ in ids] == ids
    assert sql("SELECT * FROM rate_limits") == []


def test_a_batch_claim_takes_only_the_allowance_left(world, agent):
    limit(world, "api", 3, "minute")
    for _ in range(5):
        new(agent, "api")
    assert len(execute(agent_store.claim_batch(agent, max=5))) == 3
    assert execute(agent_store.claim_batch(agent, max=5)) == []


def test_a_takeover_takes_an_allowance_too(world, agent):
    limit(world, "api", 1, "hour")
    todo = new(agent, "api")
    execute(agent_store.claim_next(agent))
    lapse(todo)
    assert execute(agent_store.claim_next(agent)) is None
    age_ring(world.team.id, "api", timedelta(hours=1))
    took = execute(agent_store.claim_next(agent))
    assert took.took_over and took.todo.id == todo


def test_a_person_s_claim_counts_against_the_limit(world, agent, human):
    limit(world, "api", 1, "hour")
    first, second = new(agent, "api"), new(agent, "api")
    execute(human_store.claim(human, first))
    with pytest.raises(Conflict):
        execute(human_store.claim(human, second))


def test_a_throttled_key_leaves_its_concurrency_slot_alone(world, agent):
    limit(world, "api", 1, "hour")
    new(agent, "api", concurrency_key="deploy")
    second = new(agent, "api", concurrency_key="deploy")
    execute(agent_store.claim_next(agent))
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, second))
    assert one("SELECT claimed FROM concurrency_keys WHERE key = 'deploy'")["claimed"] == 1


def test_the_limit_is_the_team_s(world, agent):
    limit(world, "api", 1, "hour")
    new(agent, "api")
    execute(agent_store.claim_next(agent))
    foreign = new(world.foreign_agent, "api")
    assert execute(agent_store.claim_next(world.foreign_agent)).todo.id == foreign


# --- setting a limit -------------------------------------------------------------------------


def test_setting_a_limit_is_audited_and_announced(world, agent):
    new(agent, "crawl")
    with listening("board_events", "board_ready") as listener:
        changed = limit(world, "crawl", 60, "minute")
        got = listener.drain()
    assert ("board_ready", {"endpoint": str(agent.endpoint_id), "queue": "default"}) in got
    assert any(channel == "board_events" and note.get("op") == "rate" for channel, note in got)
    assert (changed.allowance, changed.per, changed.previous, changed.refills_at) == (60, "minute", None, None)
    state = ring(world.team.id, "crawl")
    assert len(state["taken"]) == 60 and state["next"] == 1
    again = limit(world, "crawl", 10, "second")
    assert again.previous == "60 per minute"
    rows = [r for r in audit() if r["action"] == "rate.limit"]
    assert [r["detail"] for r in rows] == [
        {"key": "crawl", "old": None, "new": "60 per minute"},
        {"key": "crawl", "old": "60 per minute", "new": "10 per second"},
    ]


def test_resizing_keeps_the_newest_claims(world, agent):
    limit(world, "api", 4, "hour")
    for _ in range(4):
        new(agent, "api")
    for _ in range(3):
        execute(agent_store.claim_next(agent))
    before = [t for t in ring(world.team.id, "api")["taken"] if t is not None]
    limit(world, "api", 2, "hour")
    shrunk = ring(world.team.id, "api")
    assert shrunk["taken"] == before[1:] and shrunk["next"] == 1
    assert shrunk["refills_at"] == before[1] + timedelta(hours=1)
    assert execute(agent_store.claim_next(agent)) is None
    limit(world, "api", 5, "hour")
    grown = ring(world.team.id, "api")
    assert grown["taken"] == [None, None, None, *before[1:]]
    assert grown["refills_at"] is None
    assert execute(agent_store.claim_next(agent)) is not None


def test_removing_a_limit_makes_the_key_unlimited(world, agent):
    limit(world, "api", 1, "hour")
    new(agent, "api"), new(agent, "api")
    execute(agent_store.claim_next(agent))
    assert execute(agent_store.claim_next(agent)) is None
    removed = execute(rate_limits.remove_limit(world.admin, world.team.id, "api"))
    assert removed.previous == "1 per hour"
    assert ring(world.team.id, "api") is None
    assert execute(agent_store.claim_next(agent)) is not None
    assert [r["detail"] for r in audit() if r["action"] == "rate.remove"] == [{"key": "api", "old": "1 per hour"}]


def test_removing_a_key_without_a_limit_is_not_found(world):
    with pytest.raises(NotFound, match="no rate limit for key 'api'"):
        execute(rate_limits.remove_limit(world.admin, world.team.id, "api"))


@pytest.mark.parametrize(
    ("key", "n", "per", "field"),
    [
        ("", 1, "second", "key"),
        (None, 1, "second", "key"),
        ("k" * 201, 1, "second", "key"),
        ("a\nb", 1, "second", "key"),
        ("k", 0, "second", "limit"),
        ("k", 10_001, "second", "limit"),
        ("k", "5", "second", "limit"),
        ("k", 5, "day", "interval"),
        ("k", 5, None, "interval"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(world, key, n, per, field):
    with pytest.raises(Invalid) as refused:
        execute(rate_limits.set_limit(world.admin, world.team.id, key, n, per))
    assert refused.value.field == field
    assert sql("SELECT * FROM rate_limits") == []
    assert [r for r in audit() if r["action"].startswith("rate.")] == []


def test_the_bounds_are_accepted(world):
    assert limit(world, "one", 1).allowance == 1
    assert limit(world, "many", 10_000, "hour").allowance == 10_000


def test_only_a_team_admin_sets_or_removes_a_limit(world):
    for person in (world.human, world.viewer):
        with pytest.raises(Forbidden):
            execute(rate_limits.set_limit(person, world.team.id, "k", 1, "second"))
    with pytest.raises(NotFound):
        execute(rate_limits.set_limit(world.outsider, world.team.id, "k", 1, "second"))
    limit(world, "k", 1)
    with pytest.raises(Forbidden):
        execute(rate_limits.remove_limit(world.human, world.team.id, "k"))
    with pytest.raises(NotFound):
        execute(rate_limits.remove_limit(world.outsider, world.team.id, "k"))
    assert ring(world.team.id, "k")["allowance"] == 1


def test_a_bad_rate_key_on_create_is_refused_naming_the_field(agent):
    with pytest.raises(Invalid) as refused:
        new(agent, "k" * 201)
    assert refused.value.field == "rate_key"
    with pytest.raises(Invalid) as refused:
        execute(agent_store.create_batch(agent, [{"queue": "default", "title": "t", "rate_key": 5}]))
    assert refused.value.field == "items[0].rate_key"
    assert one("SELECT count(*) AS n FROM todos")["n"] == 0


def test_create_batch_carries_rate_keys(agent):
    made = execute(
        agent_store.create_batch(
            agent, [{"queue": "default", "title": "a", "rate_key": "api"}, {"queue": "default", "title": "b"}]
        )
    )
    assert [m.todo.rate_key for m in made] == ["api", None]


# --- under concurrency -----------------------------------------------------------------------


def test_sixteen_claimers_never_exceed_n_in_any_window(world, agent):
    """16 threads on their own connections claim a key limited to 5 per second for ~3 s as fast as
    they can; every claim's time (the ring's entry, read in the claim's own transaction) is kept."""
    n, seconds = 5, 3.0
    limit(world, "api", n, "second")
    execute(agent_store.create_batch(agent, [{"queue": "default", "title": "t", "rate_key": "api"}] * 200))
    times: list = []
    lock = threading.Lock()

    def work(i, barrier):
        with db.connect() as conn:
            barrier.wait()
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                with conn.transaction():
                    claim = execute(agent_store.claim_next(agent), conn)
                    if claim is not None:
                        at = conn.execute(
                            "SELECT taken[CASE WHEN next = 1 THEN allowance ELSE next - 1 END] AS at FROM rate_limits"
                            " WHERE team_id = %s AND key = 'api'",
                            (world.team.id,),
                        ).fetchone()["at"]
                        with lock:
                            times.append(at)
        return None

    outcomes = run_threads(16, work, timeout=60)
    assert all(o is None for o in outcomes), outcomes
    times.sort()
    assert len(set(times)) == len(times)
    for j in range(len(times) - n):
        assert times[j + n] - times[j] >= timedelta(seconds=1), "more than N claims within one second"
    # ~3 s at 5 a second: between 3 windows' worth and 4 (the first window is full at once)
    assert 3 * n <= len(times) <= 4 * n + 1, len(times)
    assert one("SELECT count(*) AS n FROM todos WHERE state = 'claimed'")["n"] == len(times)


def test_a_miss_says_when_the_soonest_limited_key_refills(world, agent):
    assert execute(claim_next_or_refill(agent)).refill_in is None  # nothing limited
    limit(world, "api", 1, "hour")
    new(agent, "api"), new(agent, "api")
    took = execute(claim_next_or_refill(agent))
    assert took.claim is not None and took.refill_in is None
    missed = execute(claim_next_or_refill(agent))
    assert missed.claim is None and 3590 < missed.refill_in <= 3600


def test_a_miss_with_a_limited_key_that_has_room_says_look_again_soon(world, agent):
    limit(world, "api", 5, "hour")
    todo = new(agent, "api")
    with db.connect() as holder, holder.transaction():
        holder.execute("SELECT 1 FROM todos WHERE id = %s FOR UPDATE", (todo,))
        missed = execute(claim_next_or_refill(agent))
    assert missed.claim is None and missed.refill_in == 0

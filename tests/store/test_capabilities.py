"""Required capabilities: a todo names the labels it needs (``requires``); a claim
presents ``capabilities`` (or, presenting none, its endpoint's defaults) and takes only todos whose
requirements are a subset of them. A claim presenting nothing takes only todos needing nothing."""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections import Counter

import pytest

from tests import factories
from tests.store.helpers import audit, one, run_threads, sql
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict, Invalid
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store


def new(agent, requires=None, queue="default", **kw) -> str:
    return execute(agent_store.create(agent, queue=queue, title="t", requires=requires, **kw)).todo.id


def test_requires_is_stored_as_a_sorted_set_and_empty_by_default(agent):
    made = execute(agent_store.create(agent, queue="default", title="t", requires=["gpu", "cuda", "gpu"])).todo
    assert made.requires == ("cuda", "gpu")
    assert execute(agent_store.create(agent, queue="default", title="plain")).todo.requires == ()
    assert one("SELECT requires FROM todos WHERE id = %s", (made.id,))["requires"] == ["cuda", "gpu"]


def test_a_claim_takes_only_what_its_capabilities_cover(agent):
    gpu = new(agent, ["gpu"])
    both = new(agent, ["gpu", "region:eu"])
    plain = new(agent)
    # presenting nothing: only the todo that needs nothing, however old the others are
    assert execute(agent_store.claim_next(agent)).todo.id == plain
    assert execute(agent_store.claim_next(agent)) is None
    # a subset is enough, more labels than needed do no harm
    assert execute(agent_store.claim_next(agent, capabilities=["gpu", "extra"])).todo.id == gpu
    assert execute(agent_store.claim_next(agent, capabilities=["gpu", "extra"])) is None
    assert execute(agent_store.claim_next(agent, capabilities=["region:eu", "gpu"])).todo.id == both


def test_a_capable_claim_still_takes_work_that_needs_nothing_in_claim_order(agent):
    plain = new(agent, priority=-1)
    gpu = new(agent, ["gpu"])
    claims = execute(agent_store.claim_batch(agent, max=10, capabilities=["gpu"]))
    assert [c.todo.id for c in claims] == [plain, gpu]


def test_claim_by_id_names_the_missing_capabilities_and_writes_nothing(agent):
    todo = new(agent, ["gpu", "region:eu"])
    with pytest.raises(Conflict, match="does not present: gpu, region:eu"):
        execute(agent_store.claim(agent, todo))
    with pytest.raises(Conflict, match="does not present: region:eu"):
        execute(agent_store.claim(agent, todo, capabilities=["gpu"]))
    assert one("SELECT state, attempts_total FROM todos WHERE id = %s", (todo,)) == {
        "state": "pending",
        "attempts_total": 0,
    }
    assert execute(agent_store.claim(agent, todo, capabilities=["gpu", "region:eu"])).todo.state == "claimed"


def test_retries_and_takeovers_keep_their_requirements(agent):
    todo = new(agent, ["gpu"], max_attempts=3)
    execute(agent_store.claim_next(agent, capabilities=["gpu"]))
    execute(agent_store.fail(agent, todo))
    sql("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo,))
    assert execute(agent_store.claim_next(agent)) is None  # a due retry is still capability-bound
    assert execute(agent_store.claim_next(agent, capabilities=["gpu"])).todo.id == todo
    sql("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo,))
    assert execute(agent_store.claim_next(agent)) is None  # so is a lapsed lease
    assert execute(agent_store.claim_next(agent, capabilities=["gpu"])).took_over


def test_endpoint_defaults_apply_when_a_claim_presents_none_and_are_replaced_when_it_does(world):
    vended = factories.endpoint(world.team, slug="gpu-box", capabilities=["gpu", "cuda"])
    assert vended.endpoint.capabilities == ("cuda", "gpu")
    box = factories.agent(vended)
    gpu, cpu_only = new(box, ["gpu"]), new(box, ["avx512"])
    # no capabilities of its own: the endpoint's defaults
    assert execute(agent_store.claim_next(box)).todo.id == gpu
    # its own capabilities replace the defaults (not merged): avx512 yes, gpu would not be
    gpu2 = new(box, ["gpu"])
    assert execute(agent_store.claim_next(box, capabilities=["avx512"])).todo.id == cpu_only
    assert execute(agent_store.claim_next(box, capabilities=["avx512"])) is None
    assert execute(agent_store.claim_next(box)).todo.id == gpu2


def test_set_capabilities_is_audited_and_read_by_the_next_credential_lookup(world):
    from todos.core.selectors.agent_api import credential_for

    record = execute(endpoint_store.set_capabilities(world.admin, world.agent.endpoint_id, ["gpu", "arm64"]))
    assert record.capabilities == ("arm64", "gpu")
    row = one("SELECT credential_hash FROM endpoints WHERE id = %s", (world.agent.endpoint_id,))
    credential = execute(credential_for(row["credential_hash"]))
    assert credential is not None and credential.agent().capabilities == ("arm64", "gpu")
    trail = [a for a in audit() if a["action"] == "endpoint.capabilities"]
    assert trail and trail[0]["detail"] == {"from": [], "to": ["arm64", "gpu"]}
    # a viewer may not
    from todos.core.store import Forbidden

    with pytest.raises(Forbidden):
        execute(endpoint_store.set_capabilities(world.human, world.agent.endpoint_id, ["x"]))


BAD_LABELS = [
    ("not a list", "requires", "must be a list of labels"),
    ([f"l{n}" for n in range(17)], "requires", "at most 16 labels, got 17"),
    (["ok", "x" * 65], "requires[1]", "at most 64 characters, got 65"),
    ([""], "requires[0]", "must not be empty"),
    (["gpu", 3], "requires[1]", "must be a string"),
    ([None], "requires[0]", "must be a string"),
    (["two words"], "requires[0]", "must be letters, digits"),
    (["gpu\n"], "requires[0]", "must be letters, digits"),
]


@pytest.mark.parametrize(("value", "field", "problem"), BAD_LABELS)
def test_bad_requires_names_the_field_and_writes_nothing(agent, value, field, problem):
    with pytest.raises(Invalid) as caught:
        execute(agent_store.create(agent, queue="default", title="t", requires=value))
    assert caught.value.field == field and problem in caught.value.problem
    assert one("SELECT count(*) AS n FROM todos")["n"] == 0


@pytest.mark.parametrize(("value", "field", "problem"), BAD_LABELS)
def test_bad_claim_capabilities_name_the_field_and_claim_nothing(agent, value, field, problem):
    new(agent)
    field = field.replace("requires", "capabilities")
    for build in (
        lambda: agent_store.claim_next(agent, capabilities=value),
        lambda: agent_store.claim_batch(agent, max=5, capabilities=value),
    ):
        with pytest.raises(Invalid) as caught:
            execute(build())
        assert caught.value.field == field and problem in caught.value.problem
    assert one("SELECT count(*) AS n FROM todos WHERE state = 'claimed'")["n"] == 0


@pytest.mark.parametrize(("value", "field", "problem"), BAD_LABELS)
def test_bad_endpoint_capabilities_name_the_field_and_write_nothing(world, value, field, problem):
    field = field.replace("requires", "capabilities")
    with pytest.raises(Invalid) as caught:
        execute(endpoint_store.set_capabilities(world.admin, world.agent.endpoint_id, value))
    assert caught.value.field == field and problem in caught.value.problem
    with pytest.raises(Invalid):
        factories.endpoint(world.team, slug="bad-caps", capabilities=value)
    assert one("SELECT count(*) AS n FROM endpoints WHERE slug = 'bad-caps'")["n"] == 0
    assert one("SELECT capabilities FROM endpoints WHERE id = %s", (world.agent.endpoint_id,))["capabilities"] == []


def test_sixteen_labels_of_sixty_four_characters_are_fine(agent):
    labels = [f"{n:02d}" + "x" * 62 for n in range(16)]
    todo = new(agent, labels)
    assert execute(agent_store.claim_next(agent, capabilities=labels)).todo.id == todo


def test_the_database_refuses_what_the_store_would_not_write(agent):
    todo = new(agent)
    from psycopg.errors import CheckViolation

    with db.connect() as conn, pytest.raises(CheckViolation):
        conn.execute("UPDATE todos SET requires = %s WHERE id = %s", ([f"l{n}" for n in range(17)], todo))


def test_workers_with_different_capabilities_drain_a_mixed_queue(world):
    """Real threads: four kinds of worker (nothing, gpu, eu, gpu+eu) claim concurrently from one
    queue holding work for every combination. Each todo is claimed only by a worker whose set
    covers its requirements, and every todo is drained."""
    agent = world.agent
    needs = [(), ("gpu",), ("region:eu",), ("gpu", "region:eu")]
    wanted: dict[str, tuple[str, ...]] = {}
    for n in range(160):
        requirement = needs[n % 4]
        wanted[new(agent, list(requirement), priority=random.randint(0, 3))] = requirement
    sets = [(), ("gpu",), ("region:eu",), ("gpu", "region:eu")] * 2
    taken: dict[str, list[tuple[str, ...]]] = {}
    guard = threading.Lock()

    def worker(i, barrier):
        mine = sets[i]
        scope = dataclasses.replace(agent)
        done = 0
        with db.connect() as conn:
            barrier.wait()
            idle_since = None
            while True:
                claim = execute(agent_store.claim_next(scope, capabilities=list(mine) or None, claimant=f"w{i}"), conn)
                if claim is None:
                    left = one(
                        "SELECT count(*) AS n FROM todos WHERE state <> 'done' AND requires <@ %s::text[]",
                        (list(mine),),
                    )["n"]
                    if left == 0:
                        return done
                    idle_since = idle_since or time.monotonic()
                    assert time.monotonic() - idle_since < 20, "work starved"
                    time.sleep(0.005)
                    continue
                idle_since = None
                with guard:
                    taken.setdefault(claim.todo.id, []).append(mine)
                time.sleep(random.uniform(0, 0.002))
                execute(agent_store.complete(scope, claim.todo.id), conn)
                done += 1

    outcomes = run_threads(len(sets), worker, timeout=120)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert sum(outcomes) == len(wanted)
    assert one("SELECT count(*) AS n FROM todos WHERE state = 'done'")["n"] == len(wanted)
    assert set(taken) == set(wanted)
    assert all(len(by) == 1 for by in taken.values())  # each claimed once
    assert all(set(wanted[t]) <= set(by[0]) for t, by in taken.items())
    # the plain workers took part (work needing nothing is everyone's), and only in plain work
    by_set = Counter(by[0] for by in taken.values())
    assert by_set[()] > 0
    assert all(wanted[t] == () for t, by in taken.items() if by[0] == ())

"""create_batch and a report's ``next`` over real HTTP: one call for many todos, one round trip per
job; bad input named and nothing written."""

from __future__ import annotations

import threading
import time

from tests import factories
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store


def todos_now() -> int:
    with db.connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def test_create_batch_answers_each_item_in_order(api, tenancy):
    out = api.ok(
        tenancy.worker_token,
        "create_batch",
        {
            "items": [
                {"queue": "default", "title": "one", "idempotency_key": "b-1"},
                {"queue": "default", "title": "two", "payload": {"x": 2}},
                {"queue": "default", "title": "one again", "idempotency_key": "b-1"},
            ]
        },
    )
    results = out["results"]
    assert [(r["ok"], r["created"], r["todo"]["title"]) for r in results] == [
        (True, True, "one"),
        (True, True, "two"),
        (True, False, "one"),
    ]
    assert results[0]["todo"]["id"] == results[2]["todo"]["id"]
    assert results[1]["todo"]["payload"] == {"x": 2}


def test_create_batch_names_the_bad_item_and_writes_nothing(api, tenancy):
    before = todos_now()
    message = api.error(
        tenancy.worker_token,
        "create_batch",
        {"items": [{"queue": "default", "title": "fine"}, {"queue": "default", "title": "x", "lease_seconds": 5}]},
        "invalid",
    )
    assert "items[1].lease_seconds" in message
    message = api.error(
        tenancy.worker_token,
        "create_batch",
        {"items": [{"queue": "default", "title": "fine"}, {"queue": "elsewhere", "title": "x"}]},
        "forbidden",
    )
    assert "items[1].queue" in message
    api.error(tenancy.worker_token, "create_batch", {"items": []}, "invalid")
    assert todos_now() == before


def test_create_batch_hands_the_todos_to_another_endpoint_of_the_team(api, tenancy):
    other = factories.endpoint(tenancy.team, slug="builder", queues=("default",))
    out = api.ok(
        tenancy.worker_token,
        "create_batch",
        {"items": [{"queue": "default", "title": "for the builder"}], "endpoint": "builder"},
    )
    todo_id = out["results"][0]["todo"]["id"]
    claimed = api.ok(other.token, "claim_next", {})
    assert claimed["todo"]["id"] == todo_id


def test_complete_with_next_answers_the_report_and_the_next_claim(api, tenancy):
    first = execute(agent_store.create(tenancy.agent, queue="default", title="first")).todo
    second = execute(agent_store.create(tenancy.agent, queue="default", title="second")).todo
    claimed = api.ok(tenancy.worker_token, "claim_next", {"require_fence": True})
    assert claimed["todo"]["id"] == first.id
    out = api.ok(
        tenancy.worker_token,
        "complete",
        {"id": first.id, "lease_token": claimed["lease_token"], "next": {"require_fence": True}},
    )
    assert out["todo"]["state"] == "done"
    assert out["next"]["empty"] is False and out["next"]["todo"]["id"] == second.id
    assert out["next"]["todo"]["state"] == "claimed" and out["next"]["lease_token"]
    out = api.ok(tenancy.worker_token, "fail", {"id": second.id, "lease_token": out["next"]["lease_token"], "next": {}})
    assert out["todo"]["state"] == "failed" and out["todo"]["next_retry_at"] is not None  # backing off
    assert out["next"] == {"empty": True}


def test_next_long_polls_for_work_created_meanwhile(api, tenancy):
    held = execute(agent_store.create(tenancy.agent, queue="default", title="held")).todo
    api.ok(tenancy.worker_token, "claim", {"id": held.id})
    later: list[str] = []

    def create_soon():
        time.sleep(0.5)
        later.append(execute(agent_store.create(tenancy.agent, queue="default", title="later")).todo.id)

    thread = threading.Thread(target=create_soon)
    thread.start()
    started = time.monotonic()
    out = api.ok(tenancy.worker_token, "complete", {"id": held.id, "next": {"wait_seconds": 5}})
    thread.join()
    assert out["next"]["todo"]["id"] == later[0]
    assert 0.4 < time.monotonic() - started < 4


def test_a_bad_next_is_named_and_the_report_is_not_written(api, tenancy):
    held = execute(agent_store.create(tenancy.agent, queue="default", title="held")).todo
    api.ok(tenancy.worker_token, "claim", {"id": held.id})
    message = api.error(tenancy.worker_token, "complete", {"id": held.id, "next": {"wait_seconds": -1}}, "invalid")
    assert "next.wait_seconds" in message
    message = api.error(tenancy.worker_token, "complete", {"id": held.id, "next": {"queue": "elsewhere"}}, "forbidden")
    assert "next" in message
    still = api.ok(tenancy.worker_token, "get_todo", {"id": held.id})["todo"]
    assert still["state"] == "claimed"


def test_next_needs_the_claim_next_scope_verb(api, tenancy):
    reporter = factories.endpoint(tenancy.team, slug="reporter", queues=("default",), verbs=["claim", "complete"])
    mine = execute(agent_store.create(factories.agent(reporter), queue="default", title="mine")).todo
    api.ok(reporter.token, "claim", {"id": mine.id})
    message = api.error(reporter.token, "complete", {"id": mine.id, "next": {}}, "forbidden")
    assert "claim_next" in message
    assert api.ok(reporter.token, "complete", {"id": mine.id})["todo"]["state"] == "done"  # without next: fine


def test_a_claim_that_fails_after_the_report_landed_is_answered_in_next(tenancy):
    """The report stands; the claim's error (here the database going away: unavailable, with its
    retry_after) is answered inside ``next``, and the answer still fits complete's schema."""
    import asyncio

    import jsonschema

    from todos.agents.api import handlers
    from todos.agents.api.verbs import VERBS
    from todos.core.unavailable import Unavailable

    held = execute(agent_store.create(tenancy.agent, queue="default", title="held")).todo
    execute(agent_store.claim(tenancy.agent, held.id))
    report = {"todo": {"id": held.id}}

    async def claim_fails():
        raise Unavailable(retry_after=3)

    out = asyncio.run(handlers._reported(None, report, claim_fails))  # type: ignore[arg-type]
    assert out["next"] == {"error": {"code": "unavailable", "message": Unavailable().message, "retry_after": 3}}
    next_schema = VERBS["complete"].output["properties"]["next"]
    jsonschema.validate(out["next"], next_schema)

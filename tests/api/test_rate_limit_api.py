"""Rate limits over HTTP: ``rate_key`` on create and in the todo's JSON, its refusals, and a long
poll that wakes when a throttled key gets an allowance back."""

from __future__ import annotations

import time

import httpx

from tests.api.test_longpoll import poll
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import rate_limits


def test_create_for_takes_a_rate_key_and_the_todo_shows_it(api, tenancy):
    made = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "page 1", "rate_key": "crawl"}, status=201
    )
    assert made["todo"]["rate_key"] == "crawl"
    plain = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "page 2"}, status=201)
    assert plain["todo"]["rate_key"] is None
    batch = api.ok(
        tenancy.worker_token,
        "create_batch",
        {"items": [{"queue": "default", "title": "a", "rate_key": "crawl"}, {"queue": "default", "title": "b"}]},
    )
    assert [r["todo"]["rate_key"] for r in batch["results"]] == ["crawl", None]


def test_a_bad_rate_key_is_refused_naming_the_field(api, tenancy):
    for bad in ("k" * 201, 5, "two\nlines"):
        message = api.error(
            tenancy.worker_token, "create_for", {"queue": "default", "title": "t", "rate_key": bad}, "invalid"
        )
        assert "rate_key" in message
    assert api.ok(tenancy.worker_token, "list_todos", {})["todos"] == []


def test_a_long_poll_wakes_when_the_throttled_key_refills(api, tenancy, asgi_server):
    execute(rate_limits.set_limit(None, tenancy.team.id, "api", 1, "second"))
    first = execute(agent_store.create(tenancy.agent, queue="default", title="one", rate_key="api")).todo
    second = execute(agent_store.create(tenancy.agent, queue="default", title="two", rate_key="api")).todo
    claimed = httpx.post(
        f"{asgi_server.url}/api/v1/claim_next",
        json={},
        headers={"Authorization": f"Bearer {tenancy.worker_token}"},
        timeout=10,
    ).json()
    taken_at = time.monotonic()
    assert claimed["todo"]["id"] == first.id
    waiting = poll(asgi_server.url, tenancy.worker_token, {"wait_seconds": 20})
    waiting.join(15)
    assert waiting.result["todo"]["id"] == second.id
    # the key refilled a second after the first claim; a long poll's own recheck is 5 s
    assert 0.9 <= waiting.finished_at - taken_at < 2.0, waiting.finished_at - taken_at

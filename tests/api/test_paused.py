"""A paused endpoint over HTTP: its claims answer 423 ``paused`` naming who paused it, its
reports land, a report's ``next`` claim says ``paused`` in ``next.error``, and a long poll already
waiting answers ``paused`` as soon as the pause commits."""

from __future__ import annotations

import time

import httpx

from tests import factories
from tests.api.test_longpoll import poll
from todos.agents.api.openapi import document
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store


def pause(tenancy):
    admin = factories.member(tenancy.team, factories.user("adam"), "admin")
    execute(endpoint_store.pause_claims(admin, tenancy.agent.endpoint_id))
    return admin


def test_every_claim_of_a_paused_endpoint_is_423_paused(api, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="waiting")).todo
    pause(tenancy)
    for verb, body in (
        ("claim_next", {}),
        ("claim_next", {"queue": "default", "wait_seconds": 1}),
        ("claim", {"id": todo.id}),
        ("claim_batch", {"max": 3}),
    ):
        response = api.call(tenancy.worker_token, verb, body)
        assert response.status_code == 423, (verb, response.text)
        error = response.json()["error"]
        assert error["code"] == "paused"
        assert "paused (by adam" in error["message"] and "Agents page" in error["message"]


def test_reports_of_a_paused_endpoint_land_and_next_says_paused(api, tenancy):
    todos = [execute(agent_store.create(tenancy.agent, queue="default", title=f"t{i}")).todo for i in range(2)]
    for todo in todos:
        api.ok(tenancy.worker_token, "claim", {"id": todo.id})
    pause(tenancy)
    api.ok(tenancy.worker_token, "heartbeat", {"id": todos[0].id})
    done = api.ok(tenancy.worker_token, "complete", {"id": todos[0].id, "next": {}})
    assert done["todo"]["state"] == "done"
    assert done["next"]["error"]["code"] == "paused"
    assert api.ok(tenancy.worker_token, "release", {"id": todos[1].id})["todo"]["state"] == "pending"


def test_resumed_claims_work_again(api, tenancy):
    admin = pause(tenancy)
    execute(endpoint_store.resume_claims(admin, tenancy.agent.endpoint_id))
    assert api.ok(tenancy.worker_token, "claim_next", {}) == {"empty": True}


def test_a_waiting_long_poll_answers_paused_at_once(api, tenancy, asgi_server):
    api.ok(tenancy.worker_token, "claim_next", {"wait_seconds": 0.2})  # the server's listener is up
    waiting = poll(asgi_server.url, tenancy.worker_token, {"wait_seconds": 20})
    time.sleep(0.5)
    assert waiting.finished_at is None, waiting.result
    paused_at = time.monotonic()
    pause(tenancy)
    waiting.join(10)
    assert waiting.status == 423 and waiting.result["error"]["code"] == "paused"
    assert waiting.finished_at - paused_at < 1.0, f"answered after {waiting.finished_at - paused_at:.2f} s"


def test_the_openapi_document_names_423_for_the_claims_only():
    paths = document()["paths"]
    for verb in ("claim", "claim_next", "claim_batch"):
        assert paths[f"/{verb}"]["post"]["responses"]["423"] == {"$ref": "#/components/responses/paused"}
    assert "423" not in paths["/complete"]["post"]["responses"]
    assert "paused" in document()["components"]["responses"]


def test_a_paused_error_is_not_a_server_error(tenancy, asgi_server):
    """The status and body the Python client will see, through plain HTTP."""
    pause(tenancy)
    response = httpx.post(
        f"{asgi_server.url}/api/v1/claim_next",
        json={},
        headers={"Authorization": f"Bearer {tenancy.worker_token}"},
        timeout=10,
    )
    assert response.status_code == 423 and set(response.json()["error"]) == {"code", "message"}

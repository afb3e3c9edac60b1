"""A token vended on the Board, used over real HTTP against the agent API (daphne on the test
database): exactly the chosen scopes, and rotate, revoke and expiry taking effect on the next
request, with the endpoint's live todos dead-lettered."""

from __future__ import annotations

import re
import threading
import time

import httpx
import pytest
from django.urls import reverse

from tests.support.api import eventually
from tests.support.endpoints import endpoint, sql, token_of, vend
from todos.core import db
from todos.ops import loops

pytestmark = pytest.mark.usefixtures("store_db")


@pytest.fixture
def http(asgi_server):
    with httpx.Client(base_url=asgi_server.url, timeout=10) as client:
        yield client


def call(http, token: str, verb: str, body: dict | None = None) -> httpx.Response:
    return http.post(f"/api/v1/{verb}", json=body or {}, headers={"Authorization": f"Bearer {token}"})


def code(response: httpx.Response) -> tuple[int, str | None]:
    body = response.json()
    return response.status_code, body.get("error", {}).get("code")


def test_a_vended_token_has_exactly_the_chosen_scopes(world, adam_client, http):
    token = token_of(
        vend(
            adam_client,
            name="Builder",
            scope_verbs=["create_for", "claim_next", "complete"],
            scope_queues=["builds"],
            default_lease_ttl_seconds="120",
        )
    )
    created = call(http, token, "create_for", {"queue": "builds", "title": "compile"})
    assert created.status_code == 201, created.text
    todo_id = created.json()["todo"]["id"]
    claimed = call(http, token, "claim_next", {"wait_seconds": 0})
    assert claimed.status_code == 200 and claimed.json()["todo"]["id"] == todo_id
    assert claimed.json()["todo"]["lease_expires_at"] is not None
    assert call(http, token, "complete", {"id": todo_id}).status_code == 200
    # implied by the chosen verbs
    assert call(http, token, "claim_batch", {"max": 1}).status_code == 200
    assert call(http, token, "complete_batch", {"items": [{"id": todo_id}]}).status_code == 200
    # a queue not chosen
    assert code(call(http, token, "create_for", {"queue": "default", "title": "x"})) == (403, "forbidden")
    assert code(call(http, token, "claim_next", {"queue": "default"})) == (403, "forbidden")
    # verbs not chosen (nor implied)
    for verb, body in (
        ("list_todos", {}),
        ("get_todo", {"id": todo_id}),
        ("heartbeat", {"id": todo_id}),
        ("fail", {"id": todo_id}),
        ("release", {"id": todo_id}),
        ("claim", {"id": todo_id}),
        ("get_default_lease", {}),
        ("set_default_lease", {"default_lease_ttl_seconds": 60}),
    ):
        assert code(call(http, token, verb, body)) == (403, "forbidden"), verb
    # the Board's list shows it was seen
    assert endpoint("builder")["last_seen_at"] is not None
    row = adam_client.get(reverse("endpoints")).content.decode().split('id="endpoint-builder"')[1].split("</tr>")[0]
    assert re.search(r'data-last-seen><time datetime="[^"]+" data-format="age"[^>]*>\d+s</time> ago</td>', row), row


def test_the_schedules_verb_grants_the_schedule_verbs_and_nothing_else(world, adam_client, http):
    token = token_of(vend(adam_client, name="Planner", scope_verbs=["schedules"], scope_queues=["builds"]))
    body = {"name": "nightly build", "cron": "0 2 * * *", "timezone": "UTC", "queue": "builds", "title": "Build"}
    made = call(http, token, "create_schedule", body)
    assert made.status_code == 200, made.text
    assert call(http, token, "list_schedules").json()["schedules"][0]["id"] == made.json()["schedule"]["id"]
    assert code(call(http, token, "create_schedule", {**body, "name": "x", "queue": "default"}))[1] == "invalid"
    assert code(call(http, token, "create_for", {"queue": "builds", "title": "x"})) == (403, "forbidden")
    assert code(call(http, token, "list_todos")) == (403, "forbidden")


def test_narrowed_scopes_apply_to_the_next_request(world, adam_client, http):
    token = token_of(
        vend(adam_client, name="Narrow", scope_verbs=["create_for", "list_todos"], scope_queues=["a", "b"])
    )
    assert call(http, token, "create_for", {"queue": "b", "title": "x"}).status_code == 201
    adam_client.post(
        reverse("endpoint_edit", args=["narrow"]),
        {"scope_verbs": ["create_for"], "scope_queues": ["a"], "confirm": "narrow"},
    )
    assert code(call(http, token, "create_for", {"queue": "b", "title": "y"})) == (403, "forbidden")
    assert code(call(http, token, "list_todos")) == (403, "forbidden")
    assert call(http, token, "create_for", {"queue": "a", "title": "z"}).status_code == 201


def test_rotate_refuses_the_old_token_on_its_next_request(world, adam_client, http):
    old = token_of(vend(adam_client, name="Rotor", scope_verbs=["list_todos"]))
    assert call(http, old, "list_todos").status_code == 200
    prefix = endpoint("rotor")["credential_prefix"]
    new = token_of(adam_client.post(reverse("endpoint_rotate", args=["rotor"]), {"prefix": prefix}))
    assert new != old
    assert call(http, new, "list_todos").status_code == 200

    def refused() -> None:
        assert code(call(http, old, "list_todos")) == (401, "unauthorized")

    eventually(refused)


def _live_work(http, token: str) -> dict[str, str]:
    """Through the API: a pending todo, one claimed, one failed with a retry scheduled, one done."""
    ids = {}
    for key in ("retry", "claimed", "done", "pending"):
        ids[key] = call(http, token, "create_for", {"queue": "default", "title": key, "max_attempts": 3}).json()[
            "todo"
        ]["id"]
        if key != "pending":
            assert call(http, token, "claim", {"id": ids[key]}).status_code == 200
    assert (
        call(http, token, "fail", {"id": ids["retry"], "summary": "flaky"}).json()["todo"]["next_retry_at"] is not None
    )
    assert call(http, token, "complete", {"id": ids["done"]}).status_code == 200
    return ids


def _assert_dead_lettered(ids: dict[str, str], slug: str) -> None:
    todos = {r["id"]: r for r in sql("SELECT * FROM todos WHERE id = ANY(%s)", (list(ids.values()),))}
    for key in ("pending", "claimed", "retry"):
        todo = todos[ids[key]]
        assert (todo["state"], todo["next_retry_at"], todo["owner"], todo["lease_expires_at"]) == (
            "failed",
            None,
            None,
            None,
        ), key
        assert todo["result"]["error"] == "endpoint_revoked" and todo["result"]["endpoint"] == slug, key
    assert todos[ids["done"]]["state"] == "done"

    def outcomes(key):
        return [
            (a["outcome"], a["disposition"])
            for a in sql("SELECT outcome, disposition FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (ids[key],))
        ]

    assert outcomes("claimed") == [("revoked", "dead_lettered")]  # the open attempt, closed by the revoke
    assert outcomes("retry") == [("failed", "retry_scheduled")]  # closed before; nothing to close now
    assert outcomes("pending") == []
    assert outcomes("done") == [("completed", "done")]


def test_revoke_refuses_the_token_and_dead_letters_the_live_todos(world, adam_client, http):
    drain = ["create_for", "list_todos", "get_todo", "claim_next", "claim", "heartbeat", "complete", "fail", "release"]
    token = token_of(vend(adam_client, name="Doomed", scope_verbs=drain))
    ids = _live_work(http, token)
    confirm = adam_client.get(reverse("endpoint_revoke", args=["doomed"])).content.decode()
    assert "3 live todos will be dead-lettered" in confirm
    assert adam_client.post(reverse("endpoint_revoke", args=["doomed"])).status_code == 302

    def refused() -> None:
        assert code(call(http, token, "list_todos")) == (401, "unauthorized")

    eventually(refused)
    assert code(call(http, token, "complete", {"id": ids["claimed"]})) == (401, "unauthorized")
    _assert_dead_lettered(ids, "doomed")


def test_the_expiry_loop_revokes_an_expired_endpoint_the_same_way(world, adam_client, http, settings):
    drain = ["create_for", "claim", "complete", "fail"]
    token = token_of(vend(adam_client, name="Brief", scope_verbs=drain, lifetime="1h"))
    ids = _live_work(http, token)
    with db.connect() as conn:  # setup only: the lifetime ends now (behind the store's back: the
        # servers' cached credential still says an hour, until the sweep's revoke notifies them)
        conn.execute("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE slug = 'brief'")
    settings.BOARD_EXPIRY_INTERVAL = 0.05
    [expiry] = [s for s in loops.SWEEPS if s.name == "expiry"]
    stop = threading.Event()
    threads = loops.start_loops(stop, (expiry,))
    try:
        deadline = time.monotonic() + 10
        while endpoint("brief")["state"] != "revoked" and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
    assert endpoint("brief")["state"] == "revoked"

    def refused() -> None:
        assert code(call(http, token, "create_for", {"queue": "default", "title": "late"})) == (401, "unauthorized")

    eventually(refused)
    _assert_dead_lettered(ids, "brief")
    [entry] = sql("SELECT * FROM audit_log WHERE action = 'endpoint.expire'")
    assert (entry["actor"], entry["detail"]) == ("system", {"dead_lettered": 3})
    body = adam_client.get(reverse("endpoints")).content.decode()
    assert "⊘ revoked" in body.split('id="endpoint-brief"')[1].split("</tr>")[0]

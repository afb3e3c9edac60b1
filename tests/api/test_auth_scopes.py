"""Bearer authentication, verb and queue scopes, and tenant isolation, over real HTTP."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tests import factories
from tests.support.api import eventually
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import endpoints
from todos.core.store.endpoints import SCOPE_VERBS
from todos.core.store.scopes import AgentScope

SCHEDULE_VERBS = (
    "list_schedules",
    "create_schedule",
    "update_schedule",
    "fire_schedule",
    "pause_schedule",
    "resume_schedule",
    "delete_schedule",
)
# A valid body for every verb (the todo id is filled in per test).
BODIES = {
    "create_for": lambda tid: {"queue": "default", "title": "x"},
    "create_batch": lambda tid: {"items": [{"queue": "default", "title": "x"}]},
    "list_todos": lambda tid: {},
    "get_todo": lambda tid: {"id": tid},
    "claim_next": lambda tid: {},
    "claim": lambda tid: {"id": tid},
    "heartbeat": lambda tid: {"id": tid},
    "complete": lambda tid: {"id": tid},
    "fail": lambda tid: {"id": tid},
    "release": lambda tid: {"id": tid},
    "claim_batch": lambda tid: {"max": 1},
    "complete_batch": lambda tid: {"items": [{"id": tid}]},
    "get_default_lease": lambda tid: {},
    "set_default_lease": lambda tid: {"default_lease_ttl_seconds": 600},
    "list_schedules": lambda tid: {},
    "create_schedule": lambda tid: {
        "name": "nightly",
        "cron": "0 3 * * *",
        "timezone": "UTC",
        "queue": "default",
        "title": "x",
    },
    "update_schedule": lambda tid: {
        "id": "00000000-0000-4000-8000-000000000001",
        "name": "nightly",
        "cron": "0 3 * * *",
        "timezone": "UTC",
        "queue": "default",
        "title": "x",
    },
    "fire_schedule": lambda tid: {"id": "00000000-0000-4000-8000-000000000001"},
    "pause_schedule": lambda tid: {"id": "00000000-0000-4000-8000-000000000001"},
    "resume_schedule": lambda tid: {"id": "00000000-0000-4000-8000-000000000001"},
    "delete_schedule": lambda tid: {"id": "00000000-0000-4000-8000-000000000001"},
}
# The scope verbs that grant each API verb.
GRANTED_BY = {
    **{verb: {verb} for verb in BODIES},
    "get_todo": {"get_todo", "list_todos"},
    "claim_batch": {"claim_next"},
    "complete_batch": {"complete"},
    "create_batch": {"create_for"},
    **{verb: {"schedules"} for verb in SCHEDULE_VERBS},
}


def row(todo_id: str) -> dict:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM todos WHERE id = %s", (todo_id,)).fetchone()


def attempts(todo_id: str) -> list[dict]:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (todo_id,)).fetchall()


# --- authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer two words", "Token abc", "Basic dXNlcjpwdw==", "Bearer bd_unknown-token-000"],
)
def test_missing_malformed_or_unknown_tokens_are_unauthorized(api, tenancy, header):
    headers = {} if header is None else {"Authorization": header}
    response = api.client.post("/api/v1/list_todos", json={}, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_scheme_is_case_insensitive(api, tenancy):
    response = api.client.post(
        "/api/v1/list_todos", json={}, headers={"Authorization": f"bearer {tenancy.worker_token}"}
    )
    assert response.status_code == 200


def test_a_revoked_token_is_refused_as_soon_as_the_revoke_reaches_the_server(api, tenancy):
    api.ok(tenancy.worker_token, "list_todos")  # cached by the server
    execute(endpoints.revoke(None, tenancy.worker.endpoint.id))
    assert "revoked" in eventually(lambda: api.error(tenancy.worker_token, "list_todos", {}, "unauthorized"))


def test_a_rotated_token_is_refused_and_the_new_one_works(api, tenancy):
    api.ok(tenancy.worker_token, "list_todos")
    rotated = execute(endpoints.rotate(None, tenancy.worker.endpoint.id))
    api.ok(rotated.token, "list_todos")  # at once: a token nobody held is never cached
    eventually(lambda: api.error(tenancy.worker_token, "list_todos", {}, "unauthorized"))


def test_an_expired_token_is_refused_on_its_first_request_after_expiry(api, tenancy):
    """Cached or not, expiry is checked on every request (a raw UPDATE of expires_at would go
    unseen for BOARD_TOKEN_CACHE_SECONDS: the store never changes it, so nothing notifies)."""
    lifetime = 2.0
    brief = factories.endpoint(tenancy.team, slug="brief", expires_at=datetime.now(UTC) + timedelta(seconds=lifetime))
    expires = time.monotonic() + lifetime
    api.ok(brief.token, "list_todos")
    api.ok(brief.token, "list_todos")  # cached by now
    time.sleep(max(0.0, expires - time.monotonic()) + 0.05)
    assert "expired" in api.error(brief.token, "list_todos", {}, "unauthorized")


def test_last_seen_is_stamped_at_most_once_a_minute(api, tenancy):
    def last_seen():
        with db.connect() as conn:
            return conn.execute(
                "SELECT last_seen_at FROM endpoints WHERE id = %s", (tenancy.worker.endpoint.id,)
            ).fetchone()["last_seen_at"]

    # The stamp a minute later: tests/api/test_token_cache.py (each process decides from its cache
    # entry, so a last_seen_at moved back behind its back is not seen within the minute).
    assert last_seen() is None
    api.ok(tenancy.worker_token, "list_todos")
    first = last_seen()
    assert first is not None
    api.ok(tenancy.worker_token, "list_todos")
    assert last_seen() == first


def test_a_default_lease_set_elsewhere_reaches_the_server(api, tenancy):
    """A change made in another process (the Board) ends the server's cached credential."""
    api.ok(tenancy.worker_token, "get_default_lease")
    execute(endpoints.set_default_lease(None, tenancy.worker.endpoint.id, 700))

    def lease() -> None:
        assert api.ok(tenancy.worker_token, "get_default_lease")["default_lease_ttl_seconds"] == 700

    eventually(lease)


# --- verb scopes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", sorted(BODIES))
def test_a_verb_outside_scope_verbs_is_forbidden(api, tenancy, verb):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="x")).todo
    without = [v for v in SCOPE_VERBS if v not in GRANTED_BY[verb]]
    vended = factories.endpoint(tenancy.team, slug="narrow", queues=("default",), verbs=without)
    message = api.error(vended.token, verb, BODIES[verb](todo.id), "forbidden")
    assert verb in message


def test_scope_checks_come_before_body_validation(api, tenancy):
    vended = factories.endpoint(tenancy.team, slug="reader", queues=("default",), verbs=["list_todos"])
    api.error(vended.token, "claim", {"bogus": 1}, "forbidden")


@pytest.mark.parametrize(
    "granted, verb",
    [("list_todos", "get_todo"), ("claim_next", "claim_batch"), ("complete", "complete_batch")],
)
def test_implied_verbs(api, tenancy, granted, verb):
    held = execute(agent_store.create(tenancy.agent, queue="default", title="x")).todo
    vended = factories.endpoint(tenancy.team, slug="implied", queues=("default",), verbs=[granted, "claim"])
    if verb == "complete_batch":
        mine = execute(agent_store.create(factories.agent(vended), queue="default", title="mine")).todo
        api.ok(vended.token, "claim", {"id": mine.id})
        assert api.ok(vended.token, verb, {"items": [{"id": mine.id}]})["results"][0]["ok"] is True
    elif verb == "get_todo":
        api.error(vended.token, verb, {"id": held.id}, "not_found")  # allowed, but not its todo
    else:
        assert api.ok(vended.token, verb, {"max": 1}) == {"todos": []}


def test_nothing_implies_a_state_changing_verb(api, tenancy):
    vended = factories.endpoint(
        tenancy.team, slug="reader", queues=("default",), verbs=["list_todos", "get_todo", "claim_next"]
    )
    todo = execute(agent_store.create(factories.agent(vended), queue="default", title="x")).todo
    for verb in (
        "claim",
        "heartbeat",
        "complete",
        "fail",
        "release",
        "complete_batch",
        "create_for",
        "create_batch",
        "set_default_lease",
        *SCHEDULE_VERBS,
    ):
        api.error(vended.token, verb, BODIES[verb](todo.id), "forbidden")


# --- queue scopes --------------------------------------------------------------------------------


@pytest.fixture
def outside(tenancy):
    """A todo of the worker's own endpoint in a queue outside its scope (created through a wider
    scope of the same endpoint, as an operator's re-scoping would leave behind)."""
    wide = AgentScope(
        endpoint_id=tenancy.agent.endpoint_id,
        team_id=tenancy.agent.team_id,
        queues=("default", "other", "secret"),
    )
    todo = execute(agent_store.create(wide, queue="secret", title="outside")).todo
    claimed = execute(agent_store.claim(wide, todo.id))
    return claimed.todo


@pytest.mark.parametrize("verb", ["claim", "heartbeat", "complete", "fail", "release"])
def test_a_verb_on_a_todo_in_a_queue_outside_scope_is_forbidden(api, tenancy, outside, verb):
    before = row(outside.id)
    api.error(tenancy.worker_token, verb, {"id": outside.id}, "forbidden")
    assert row(outside.id) == before


def test_get_todo_outside_the_queue_scope_is_not_found(api, tenancy, outside):
    api.error(tenancy.worker_token, "get_todo", {"id": outside.id}, "not_found")
    assert outside.id not in {t["id"] for t in api.ok(tenancy.worker_token, "list_todos")["todos"]}


def test_complete_batch_item_outside_the_queue_scope_is_forbidden(api, tenancy, outside):
    result = api.ok(tenancy.worker_token, "complete_batch", {"items": [{"id": outside.id}]})["results"][0]
    assert result["ok"] is False and result["error"]["code"] == "forbidden"
    assert row(outside.id)["state"] == "claimed"


@pytest.mark.parametrize(
    "verb, body",
    [
        ("create_for", {"queue": "secret", "title": "x"}),
        ("list_todos", {"queue": "secret"}),
        ("claim_next", {"queue": "secret"}),
        ("claim_next", {"queue": "secret", "wait_seconds": 5}),
        ("claim_batch", {"queue": "secret", "max": 3}),
    ],
)
def test_naming_a_queue_outside_scope_is_forbidden(api, tenancy, verb, body):
    assert "secret" in api.error(tenancy.worker_token, verb, body, "forbidden")


def test_claim_next_without_a_queue_only_claims_scoped_queues(api, tenancy, outside):
    with db.connect() as conn:  # make the outside todo claimable again
        conn.execute(
            "UPDATE todo_attempts SET ended_at = now(), outcome = 'released', disposition = 'requeued' "
            "WHERE todo_id = %s",
            (outside.id,),
        )
        conn.execute(
            "UPDATE todos SET state = 'pending', owner = NULL, lease_expires_at = NULL WHERE id = %s", (outside.id,)
        )
    factories.recount()
    assert api.ok(tenancy.worker_token, "claim_next") == {"empty": True}


# --- tenant isolation ------------------------------------------------------------------------------


@pytest.fixture
def foreign(store_db):
    """A claimed todo of another team's endpoint, in a queue with the same name."""
    other = factories.endpoint(factories.team(), slug="foreigner", queues=("default",))
    scope = factories.agent(other)
    todo = execute(agent_store.create(scope, queue="default", title="not yours")).todo
    execute(agent_store.claim(scope, todo.id))
    pending = execute(agent_store.create(scope, queue="default", title="not yours either")).todo
    return todo.id, pending.id


@pytest.mark.parametrize("verb", ["get_todo", "claim", "heartbeat", "complete", "fail", "release"])
def test_another_teams_todo_is_not_found_and_untouched(api, tenancy, foreign, verb):
    for todo_id in foreign:
        before, history = row(todo_id), attempts(todo_id)
        api.error(tenancy.worker_token, verb, {"id": todo_id}, "not_found")
        assert row(todo_id) == before and attempts(todo_id) == history


def test_another_teams_todos_are_invisible_to_lists_claims_and_batches(api, tenancy, foreign):
    claimed, pending = foreign
    assert api.ok(tenancy.worker_token, "list_todos")["todos"] == []
    assert api.ok(tenancy.worker_token, "claim_next") == {"empty": True}
    assert api.ok(tenancy.worker_token, "claim_batch", {"max": 10}) == {"todos": []}
    results = api.ok(tenancy.worker_token, "complete_batch", {"items": [{"id": claimed}, {"id": pending}]})["results"]
    assert [r["error"]["code"] for r in results] == ["not_found", "not_found"]
    assert row(claimed)["state"] == "claimed" and row(pending)["state"] == "pending"


def test_a_foreign_todo_answers_exactly_like_an_absent_one(api, tenancy, foreign):
    for verb in ("get_todo", "claim", "complete"):
        foreign_message = api.error(tenancy.worker_token, verb, {"id": foreign[0]}, "not_found")
        absent_message = api.error(tenancy.worker_token, verb, {"id": "td_absent"}, "not_found")
        assert foreign_message.replace(foreign[0], "ID") == absent_message.replace("td_absent", "ID")


def test_another_endpoint_of_the_same_team_is_a_separate_tenant(api, tenancy):
    sibling = factories.endpoint(tenancy.team, slug="sibling", queues=("default",))
    todo = execute(agent_store.create(factories.agent(sibling), queue="default", title="sibling's")).todo
    api.error(tenancy.worker_token, "get_todo", {"id": todo.id}, "not_found")
    api.error(tenancy.worker_token, "claim", {"id": todo.id}, "not_found")

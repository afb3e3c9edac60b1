"""Every verb's happy path over real HTTP, with the shapes docs/api.md describes.

(Every answer is also checked against the verb's declared output schema by the ``api`` client.)
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from tests import factories
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import background

TODO_KEYS = {
    "id",
    "queue",
    "source",
    "kind",
    "title",
    "state",
    "owner",
    "assignee",
    "priority",
    "attempt",
    "max_attempts",
    "attempts_total",
    "lease_expires_at",
    "next_retry_at",
    "dead_letter",
    "scheduled",
    "blocked",
    "parents_left",
    "on_parent_failure",
    "concurrency_key",
    "requires",
    "timeout_seconds",
    "rate_key",
    "traceparent",
    "created_at",
    "updated_at",
    "payload",
}
ATTEMPT_KEYS = {
    "seq",
    "attempt",
    "claimer_kind",
    "claimant",
    "claimed_at",
    "last_heartbeat_at",
    "lease_expires_at",
    "ended_at",
    "outcome",
    "disposition",
    "died",
    "summary",
    "summary_truncated",
    "artifact",
    "error",
    "traceparent",
}
RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def create(api, token, **body):
    body.setdefault("queue", "default")
    body.setdefault("title", "a todo")
    return api.ok(token, "create_for", body, status=201)["todo"]


def test_create_for_returns_the_full_row_and_201(api, tenancy):
    out = api.ok(
        tenancy.worker_token,
        "create_for",
        {
            "queue": "default",
            "title": "Fix CI",
            "kind": "ci",
            "source": "github",
            "payload": {"run": 42},
            "priority": -1,
            "max_attempts": 3,
            "assignee": None,
        },
        status=201,
    )
    todo = out["todo"]
    assert out["created"] is True
    assert set(todo) == TODO_KEYS
    assert todo["id"].startswith("td_") and todo["state"] == "pending"
    assert (todo["title"], todo["kind"], todo["source"], todo["payload"]) == ("Fix CI", "ci", "github", {"run": 42})
    assert (todo["priority"], todo["max_attempts"], todo["attempt"], todo["attempts_total"]) == (-1, 3, 0, 0)
    assert todo["owner"] is None and todo["assignee"] is None and todo["lease_expires_at"] is None
    assert todo["dead_letter"] is False and todo["next_retry_at"] is None
    assert RFC3339_UTC.match(todo["created_at"]) and RFC3339_UTC.match(todo["updated_at"])


def test_create_for_with_a_live_idempotency_key_returns_the_existing_todo_with_200(api, tenancy):
    first = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "once", "idempotency_key": "k1"}, status=201
    )
    again = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "twice", "idempotency_key": "k1"}, status=200
    )
    assert again["created"] is False
    assert again["todo"]["id"] == first["todo"]["id"] and again["todo"]["title"] == "once"


def test_create_for_hands_work_to_another_endpoint_of_the_team(api, tenancy):
    target = factories.endpoint(tenancy.team, slug="target", queues=("handoff",))
    out = api.ok(
        tenancy.worker_token, "create_for", {"queue": "handoff", "title": "for you", "endpoint": "target"}, status=201
    )
    # The todo belongs to the target: it can claim it; the caller cannot even see it.
    claimed = api.ok(target.token, "claim_next", {})
    assert claimed["empty"] is False and claimed["todo"]["id"] == out["todo"]["id"]
    api.error(tenancy.worker_token, "get_todo", {"id": out["todo"]["id"]}, "not_found")


def test_create_for_a_queue_outside_the_targets_scope_is_forbidden(api, tenancy):
    factories.endpoint(tenancy.team, slug="target", queues=("handoff",))
    # "default" is in the caller's scope but not in the target's: the target's scope decides.
    api.error(tenancy.worker_token, "create_for", {"queue": "default", "title": "x", "endpoint": "target"}, "forbidden")


def test_create_for_an_endpoint_of_another_team_or_a_revoked_one_is_not_found(api, tenancy):
    factories.endpoint(factories.team(), slug="stranger", queues=("default",))
    gone = factories.endpoint(tenancy.team, slug="gone", queues=("default",))
    from todos.core.store import endpoints

    execute(endpoints.revoke(None, gone.endpoint.id))
    for slug in ("stranger", "gone", "nobody"):
        api.error(tenancy.worker_token, "create_for", {"queue": "default", "title": "x", "endpoint": slug}, "not_found")
    assert api.ok(tenancy.worker_token, "list_todos", {})["todos"] == []


def test_list_todos_newest_first_with_filters_and_cursor_paging(api, tenancy):
    ids = [create(api, tenancy.worker_token, title=f"t{n}")["id"] for n in range(5)]
    other = create(api, tenancy.worker_token, queue="other", title="elsewhere")["id"]
    page1 = api.ok(tenancy.worker_token, "list_todos", {"queue": "default", "limit": 2})
    assert [t["id"] for t in page1["todos"]] == [ids[4], ids[3]]
    page2 = api.ok(tenancy.worker_token, "list_todos", {"queue": "default", "limit": 2, "cursor": page1["next_cursor"]})
    assert [t["id"] for t in page2["todos"]] == [ids[2], ids[1]]
    page3 = api.ok(tenancy.worker_token, "list_todos", {"queue": "default", "limit": 2, "cursor": page2["next_cursor"]})
    assert [t["id"] for t in page3["todos"]] == [ids[0]] and page3["next_cursor"] is None
    everything = api.ok(tenancy.worker_token, "list_todos", {})
    assert [t["id"] for t in everything["todos"]] == [other, *reversed(ids)]
    assert set(everything["todos"][0]) == TODO_KEYS  # no result in list rows


def test_list_todos_pages_through_rows_created_in_the_same_instant(api, tenancy):
    """The cursor keeps created_at at full precision and breaks ties by id."""
    from todos.core import db

    with db.connect() as conn:
        conn.execute(
            """INSERT INTO todos (id, endpoint_id, queue, title, created_at)
               SELECT 'td_same' || n, %s, 'default', 'same', '2026-01-01T00:00:00.123456Z'
               FROM generate_series(1, 5) n""",
            (tenancy.agent.endpoint_id,),
        )
    factories.recount()
    seen, cursor = [], None
    while True:
        body = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = api.ok(tenancy.worker_token, "list_todos", body)
        seen += [t["id"] for t in page["todos"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == 5


def test_list_todos_state_and_dead_letter_filters(api, tenancy):
    keep = create(api, tenancy.worker_token, title="pending")["id"]
    dead = create(api, tenancy.worker_token, title="dead", max_attempts=1)["id"]
    claim = api.ok(tenancy.worker_token, "claim", {"id": dead})
    api.ok(tenancy.worker_token, "fail", {"id": dead})
    assert claim["todo"]["id"] == dead
    assert [t["id"] for t in api.ok(tenancy.worker_token, "list_todos", {"state": "pending"})["todos"]] == [keep]
    assert [t["id"] for t in api.ok(tenancy.worker_token, "list_todos", {"dead_letter": True})["todos"]] == [dead]
    assert [t["id"] for t in api.ok(tenancy.worker_token, "list_todos", {"dead_letter": False})["todos"]] == [keep]
    listed = api.ok(tenancy.worker_token, "list_todos", {"state": "failed"})["todos"]
    assert listed[0]["dead_letter"] is True and listed[0]["next_retry_at"] is None


def test_get_todo_has_result_and_attempts_newest_first_with_the_open_one(api, tenancy):
    todo = create(api, tenancy.worker_token, max_attempts=5)
    first = api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "claimant": "run-1"})
    api.ok(
        tenancy.worker_token, "release", {"id": todo["id"], "summary": "not now", "artifact": "https://ci.example/1"}
    )
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "claimant": "run-2"})
    got = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})
    assert set(got) == {"todo", "attempts", "attempts_total", "attempts_pruned", "after", "parents_left"}
    assert set(got["todo"]) == TODO_KEYS | {"result"} and got["todo"]["result"] is None
    assert [a["seq"] for a in got["attempts"]] == [2, 1]
    open_, closed = got["attempts"]
    assert set(open_) == ATTEMPT_KEYS
    assert open_["ended_at"] is None and open_["outcome"] is None and open_["claimant"] == "run-2"
    assert (closed["outcome"], closed["disposition"], closed["died"]) == ("released", "requeued", False)
    assert (closed["summary"], closed["artifact"]) == ("not now", "https://ci.example/1")
    assert got["attempts_total"] == 2 and got["attempts_pruned"] == 0
    assert first["attempt_seq"] == 1
    limited = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"], "attempts_limit": 1})
    assert [a["seq"] for a in limited["attempts"]] == [2]


def test_claim_next_empty_then_a_claim_with_its_fields(api, tenancy):
    assert api.ok(tenancy.worker_token, "claim_next", {}) == {"empty": True}
    todo = create(api, tenancy.worker_token)
    out = api.ok(tenancy.worker_token, "claim_next", {"queue": "default", "lease_ttl_seconds": 120, "claimant": "w1"})
    assert out["empty"] is False and "lease_token" not in out  # unfenced: no token key at all
    assert (out["todo"]["id"], out["todo"]["state"], out["attempt_seq"], out["attempts_total"]) == (
        todo["id"],
        "claimed",
        1,
        1,
    )
    assert out["prior_attempts"] == []
    lease = datetime.fromisoformat(out["todo"]["lease_expires_at"]) - datetime.fromisoformat(out["todo"]["updated_at"])
    assert 119 <= lease.total_seconds() <= 121


def test_fenced_claim_returns_a_token_that_reports_must_present(api, tenancy):
    todo = create(api, tenancy.worker_token)
    out = api.ok(tenancy.worker_token, "claim_next", {"require_fence": True})
    token = out["lease_token"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token)
    api.error(tenancy.worker_token, "heartbeat", {"id": todo["id"]}, "conflict")
    api.error(
        tenancy.worker_token, "heartbeat", {"id": todo["id"], "lease_token": "AAAAAAAAAAAAAAAAAAAAAA"}, "conflict"
    )
    beat = api.ok(tenancy.worker_token, "heartbeat", {"id": todo["id"], "lease_token": token, "lease_ttl_seconds": 600})
    assert beat["todo"]["state"] == "claimed"
    done = api.ok(
        tenancy.worker_token,
        "complete",
        {"id": todo["id"], "lease_token": token, "result": {"ok": 1}, "summary": "fixed"},
    )
    assert done["todo"]["state"] == "done" and done["todo"]["owner"] is None


def test_claim_by_id_and_prior_attempts_after_a_takeover(api, tenancy):
    todo = create(api, tenancy.worker_token)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "lease_ttl_seconds": 1, "claimant": "slow"})
    from todos.core import db

    with db.connect() as conn:  # the lease lapses (without waiting a second)
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo["id"],))
    taken = api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "claimant": "fast"})
    assert set(taken) == {"todo", "attempt_seq", "attempts_total", "timeout_seconds", "prior_attempts"}
    assert taken["attempt_seq"] == 2 and taken["todo"]["attempt"] == 2
    (prior,) = taken["prior_attempts"]
    assert (prior["seq"], prior["outcome"], prior["died"], prior["claimant"]) == (1, "lease_expired", True, "slow")


def test_heartbeat_extends_the_lease(api, tenancy):
    todo = create(api, tenancy.worker_token)
    claimed = api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "lease_ttl_seconds": 30})
    beat = api.ok(tenancy.worker_token, "heartbeat", {"id": todo["id"], "lease_ttl_seconds": 3000})
    assert beat["todo"]["lease_expires_at"] > claimed["todo"]["lease_expires_at"]
    attempts = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["attempts"]
    assert attempts[0]["last_heartbeat_at"] is not None


def test_complete_stores_result_and_closes_the_attempt(api, tenancy):
    todo = create(api, tenancy.worker_token)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"]})
    done = api.ok(
        tenancy.worker_token,
        "complete",
        {"id": todo["id"], "result": {"pr": 7}, "summary": "s" * 3000, "artifact": "mcp://cairn/x1"},
    )
    assert done["todo"]["state"] == "done"
    got = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})
    assert got["todo"]["result"] == {"pr": 7}
    attempt = got["attempts"][0]
    assert (attempt["outcome"], attempt["disposition"]) == ("completed", "done")
    assert len(attempt["summary"]) == 2048 and attempt["summary_truncated"] is True
    assert attempt["artifact"] == "mcp://cairn/x1"


def test_fail_schedules_a_retry_then_dead_letters(api, tenancy):
    todo = create(api, tenancy.worker_token, max_attempts=2)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"]})
    failed = api.ok(tenancy.worker_token, "fail", {"id": todo["id"], "result": {"err": "flaky"}, "summary": "flaky"})[
        "todo"
    ]
    assert failed["state"] == "failed" and failed["next_retry_at"] is not None and failed["dead_letter"] is False
    from todos.core import db

    with db.connect() as conn:
        conn.execute("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo["id"],))
    assert api.ok(tenancy.worker_token, "claim_next", {})["todo"]["id"] == todo["id"]
    dead = api.ok(tenancy.worker_token, "fail", {"id": todo["id"]})["todo"]
    assert dead["state"] == "failed" and dead["next_retry_at"] is None and dead["dead_letter"] is True


def test_release_returns_the_todo_to_pending(api, tenancy):
    todo = create(api, tenancy.worker_token)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"]})
    released = api.ok(tenancy.worker_token, "release", {"id": todo["id"], "summary": "handing back"})["todo"]
    assert released["state"] == "pending" and released["owner"] is None and released["attempt"] == 1


def test_claim_batch_and_complete_batch(api, tenancy):
    ids = [create(api, tenancy.worker_token, title=f"b{n}")["id"] for n in range(3)]
    out = api.ok(tenancy.worker_token, "claim_batch", {"max": 2, "require_fence": True})
    assert [c["todo"]["id"] for c in out["todos"]] == ids[:2]
    assert all(
        set(c) == {"todo", "attempt_seq", "attempts_total", "timeout_seconds", "lease_token"} for c in out["todos"]
    )
    items = [{"id": c["todo"]["id"], "lease_token": c["lease_token"], "summary": "ok"} for c in out["todos"]]
    items.append({"id": ids[2]})  # pending: not held → conflict
    items.append({"id": "td_nope"})
    results = api.ok(tenancy.worker_token, "complete_batch", {"items": items})["results"]
    assert [r["ok"] for r in results] == [True, True, False, False]
    assert "error" not in results[0]
    assert results[2]["error"]["code"] == "conflict" and results[3]["error"]["code"] == "not_found"
    unfenced = api.ok(tenancy.worker_token, "claim_batch", {"max": 5})
    assert [c["todo"]["id"] for c in unfenced["todos"]] == [ids[2]] and "lease_token" not in unfenced["todos"][0]
    assert api.ok(tenancy.worker_token, "claim_batch", {"max": 5}) == {"todos": []}


def test_get_and_set_default_lease(api, tenancy):
    lease = api.ok(tenancy.worker_token, "get_default_lease", {})
    assert lease == {
        "default_lease_ttl_seconds": None,
        "effective_lease_ttl_seconds": 300,
        "server_default_lease_ttl_seconds": 300,
        "min_default_lease_ttl_seconds": 60,
        "max_lease_ttl_seconds": 86400,
    }
    assert (
        api.ok(tenancy.worker_token, "set_default_lease", {"default_lease_ttl_seconds": 900})[
            "effective_lease_ttl_seconds"
        ]
        == 900
    )
    assert api.ok(tenancy.worker_token, "get_default_lease")["default_lease_ttl_seconds"] == 900
    # The next claim uses it.
    create(api, tenancy.worker_token)
    claim = api.ok(tenancy.worker_token, "claim_next", {})
    lease_s = datetime.fromisoformat(claim["todo"]["lease_expires_at"]) - datetime.fromisoformat(
        claim["todo"]["updated_at"]
    )
    assert 899 <= lease_s.total_seconds() <= 901
    reset = api.ok(tenancy.worker_token, "set_default_lease", {"default_lease_ttl_seconds": None})
    assert reset["default_lease_ttl_seconds"] is None and reset["effective_lease_ttl_seconds"] == 300
    assert "default_lease_ttl_seconds" in api.error(
        tenancy.worker_token, "set_default_lease", {"default_lease_ttl_seconds": 59}, "invalid"
    )
    assert "default_lease_ttl_seconds" in api.error(tenancy.worker_token, "set_default_lease", {}, "invalid")


def test_an_empty_body_is_an_empty_object(api, tenancy):
    response = api.client.post("/api/v1/get_default_lease", headers={"Authorization": f"Bearer {tenancy.worker_token}"})
    assert response.status_code == 200 and response.json()["max_lease_ttl_seconds"] == 86400


def test_never_returns_token_hash_session_or_claimer_endpoint(api, tenancy):
    todo = create(api, tenancy.worker_token)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "require_fence": True})
    text = api.call(tenancy.worker_token, "get_todo", {"id": todo["id"]}).text
    for secret in (
        "lease_token_hash",
        "claimer_session",
        "claimer_endpoint_id",
        "credential",
        "idempotency_key",
        "endpoint_id",
    ):
        assert secret not in text


@pytest.mark.parametrize("verb", ["heartbeat", "complete", "fail", "release"])
def test_reports_on_a_todo_not_held_are_conflicts(api, tenancy, verb):
    todo = create(api, tenancy.worker_token)
    api.error(tenancy.worker_token, verb, {"id": todo["id"]}, "conflict")


def test_claim_of_a_claimed_todo_is_a_conflict_and_reaped_work_comes_back(api, tenancy):
    todo = create(api, tenancy.worker_token)
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "lease_ttl_seconds": 1})
    api.error(tenancy.worker_token, "claim", {"id": todo["id"]}, "conflict")
    from todos.core import db

    with db.connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo["id"],))
    assert execute(background.reap()).ids == (todo["id"],)
    assert api.ok(tenancy.worker_token, "claim_next", {})["todo"]["id"] == todo["id"]


def test_the_store_and_the_api_see_the_same_todos(api, tenancy):
    created = execute(agent_store.create(tenancy.agent, queue="other", title="from the store"))
    assert api.ok(tenancy.worker_token, "get_todo", {"id": created.todo.id})["todo"]["title"] == "from the store"

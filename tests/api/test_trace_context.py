"""Trace context over HTTP (docs/telemetry.md): a producer's traceparent is kept with its todo and
answered to the claimer; a worker's is kept on the attempt it settles; a malformed one is refused
naming the field or the header, and nothing is written."""

from __future__ import annotations

import pytest

from todos.core.db import connect

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
HEADER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"
BAD = [
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  # upper case
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero span id
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # the forbidden version
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",  # no flags
    "not a traceparent",
]


def todo_count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def post(api, token, verb, body, traceparent):
    return api.client.post(
        f"/api/v1/{verb}", json=body, headers={"Authorization": f"Bearer {token}", "traceparent": traceparent}
    )


def test_create_for_keeps_the_traceparent_and_claim_next_and_get_todo_answer_it(api, tenancy):
    created = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "t", "traceparent": PRODUCER}, status=201
    )
    assert created["todo"]["traceparent"] == PRODUCER
    claimed = api.ok(tenancy.worker_token, "claim_next", {})
    assert claimed["todo"]["traceparent"] == PRODUCER
    got = api.ok(tenancy.worker_token, "get_todo", {"id": created["todo"]["id"]})
    assert got["todo"]["traceparent"] == PRODUCER


def test_a_todo_created_without_one_answers_null(api, tenancy):
    created = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)
    assert created["todo"]["traceparent"] is None


def test_the_header_applies_and_the_field_overrides_it(api, tenancy):
    from_header = post(api, tenancy.worker_token, "create_for", {"queue": "default", "title": "h"}, HEADER)
    assert from_header.status_code == 201, from_header.text
    assert from_header.json()["todo"]["traceparent"] == HEADER
    body = {"queue": "default", "title": "f", "traceparent": PRODUCER}
    overridden = post(api, tenancy.worker_token, "create_for", body, HEADER)
    assert overridden.json()["todo"]["traceparent"] == PRODUCER


def test_create_batch_takes_the_header_for_every_item_unless_an_item_names_its_own(api, tenancy):
    items = [{"queue": "default", "title": "a"}, {"queue": "default", "title": "b", "traceparent": PRODUCER}]
    response = post(api, tenancy.worker_token, "create_batch", {"items": items}, HEADER)
    assert response.status_code == 200, response.text
    assert [r["todo"]["traceparent"] for r in response.json()["results"]] == [HEADER, PRODUCER]


@pytest.mark.parametrize("bad", BAD)
def test_a_malformed_traceparent_field_is_refused_naming_it_and_nothing_is_written(api, tenancy, bad):
    message = api.error(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "t", "traceparent": bad}, "invalid"
    )
    assert message.startswith("traceparent")
    assert todo_count() == 0


def test_a_malformed_item_traceparent_names_the_item_and_writes_nothing(api, tenancy):
    items = [{"queue": "default", "title": "a"}, {"queue": "default", "title": "b", "traceparent": BAD[0]}]
    message = api.error(tenancy.worker_token, "create_batch", {"items": items}, "invalid")
    assert message.startswith("items[1].traceparent")
    assert todo_count() == 0


@pytest.mark.parametrize("verb", ["create_for", "create_batch"])
def test_a_malformed_traceparent_header_is_refused_naming_the_header_and_nothing_is_written(api, tenancy, verb):
    body = {"queue": "default", "title": "t"}
    if verb == "create_batch":
        body = {"items": [body]}
    response = post(api, tenancy.worker_token, verb, body, BAD[1])
    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"].startswith("traceparent header:")
    assert todo_count() == 0


def test_complete_keeps_the_workers_traceparent_on_the_attempt(api, tenancy):
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim_next", {})
    api.ok(tenancy.worker_token, "complete", {"id": todo["id"], "traceparent": WORKER})
    attempts = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["attempts"]
    assert [a["traceparent"] for a in attempts] == [WORKER]


def test_fail_takes_the_workers_traceparent_from_the_header(api, tenancy):
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim_next", {})
    response = post(api, tenancy.worker_token, "fail", {"id": todo["id"], "summary": "no"}, WORKER)
    assert response.status_code == 200, response.text
    attempts = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["attempts"]
    assert attempts[0]["traceparent"] == WORKER and attempts[0]["outcome"] == "failed"


@pytest.mark.parametrize("where", ["field", "header"])
def test_a_malformed_settle_traceparent_is_refused_and_the_lease_is_kept(api, tenancy, where):
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim_next", {})
    body: dict = {"id": todo["id"]}
    if where == "field":
        body["traceparent"] = BAD[0]
        message = api.error(tenancy.worker_token, "complete", body, "invalid")
        assert message.startswith("traceparent")
    else:
        response = post(api, tenancy.worker_token, "complete", body, BAD[0])
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith("traceparent header:")
    got = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})
    assert got["todo"]["state"] == "claimed" and got["attempts"][0]["ended_at"] is None


def test_a_malformed_header_on_a_verb_that_keeps_nothing_is_ignored(api, tenancy):
    response = post(api, tenancy.worker_token, "claim_next", {}, "garbage")
    assert response.status_code == 200, response.text


def test_complete_batch_takes_the_header_for_every_item_unless_an_item_names_its_own(api, tenancy):
    ids = [
        api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": t}, status=201)["todo"]["id"]
        for t in ("a", "b")
    ]
    api.ok(tenancy.worker_token, "claim_batch", {"max": 2})
    body = {"items": [{"id": ids[0], "traceparent": WORKER}, {"id": ids[1]}]}
    response = post(api, tenancy.worker_token, "complete_batch", body, HEADER)
    assert response.status_code == 200, response.text
    assert [r["ok"] for r in response.json()["results"]] == [True, True]
    kept = [api.ok(tenancy.worker_token, "get_todo", {"id": i})["attempts"][0]["traceparent"] for i in ids]
    assert kept == [WORKER, HEADER]


def test_complete_batch_refuses_a_malformed_header_and_keeps_every_lease(api, tenancy):
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim_next", {})
    response = post(api, tenancy.worker_token, "complete_batch", {"items": [{"id": todo["id"]}]}, BAD[0])
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("traceparent header:")
    assert api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["todo"]["state"] == "claimed"

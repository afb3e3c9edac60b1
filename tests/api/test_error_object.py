"""The error object over HTTP: sent with fail and complete, answered on every attempt
(get_todo's attempts, a claim's prior_attempts), described in the OpenAPI document."""

from __future__ import annotations

import jsonschema
import pytest

from tests.api.test_openapi import _resolved
from tests.store.helpers import attempts, make_due, snapshot
from todos.core.store import inputs

TRACEBACK = "Traceback (most recent call last):\n  File \"job.py\", line 3, in run\nKeyError: 'user'"
ERROR = {"type": "builtins.KeyError", "message": "'user'", "traceback": TRACEBACK}


def claimed(api, token, **body) -> tuple[str, dict]:
    todo = api.ok(token, "create_for", {"queue": "default", "title": "x", **body}, status=201)["todo"]
    claim = api.ok(token, "claim", {"id": todo["id"], "require_fence": True})
    return todo["id"], claim


@pytest.mark.parametrize("verb", ["fail", "complete"])
def test_the_report_stores_the_error_and_get_todo_answers_it(api, tenancy, verb):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    api.ok(token, verb, {"id": todo_id, "lease_token": claim["lease_token"], "error": ERROR})
    [attempt] = api.ok(token, "get_todo", {"id": todo_id})["attempts"]
    assert attempt["error"] == {**ERROR, "truncated": False}


def test_a_later_claim_sees_why_the_earlier_attempt_failed(api, tenancy):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    api.ok(token, "fail", {"id": todo_id, "lease_token": claim["lease_token"], "error": {"type": "TimeoutError"}})
    make_due(todo_id)
    again = api.ok(token, "claim", {"id": todo_id})
    [prior] = again["prior_attempts"]
    assert prior["error"] == {"type": "TimeoutError", "message": None, "traceback": None, "truncated": False}


def test_a_long_traceback_is_cut_not_refused_and_says_so(api, tenancy):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    traceback = "frame\n" * 20000 + "ValueError: the end"
    api.ok(
        token,
        "fail",
        {"id": todo_id, "lease_token": claim["lease_token"], "error": {"message": "m" * 5000, "traceback": traceback}},
    )
    [attempt] = api.ok(token, "get_todo", {"id": todo_id})["attempts"]
    error = attempt["error"]
    assert error["truncated"] is True and error["type"] is None
    assert len(error["message"]) == inputs.ERROR_MESSAGE_MAX_BYTES
    assert error["traceback"].endswith("ValueError: the end")
    assert len(error["traceback"]) == inputs.ERROR_TRACEBACK_MAX_BYTES


def test_an_empty_error_is_no_error(api, tenancy):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    api.ok(token, "fail", {"id": todo_id, "lease_token": claim["lease_token"], "error": {"type": "", "message": ""}})
    assert api.ok(token, "get_todo", {"id": todo_id})["attempts"][0]["error"] is None


@pytest.mark.parametrize("verb", ["fail", "complete"])
@pytest.mark.parametrize(
    ("error", "field"),
    [
        ("boom", "error"),
        ([1], "error"),
        ({"type": 7}, "error.type"),
        ({"message": True}, "error.message"),
        ({"traceback": ["a"]}, "error.traceback"),
        ({"type": "E", "stack": "s"}, "error.stack"),
    ],
)
def test_a_malformed_error_is_invalid_naming_the_field_and_writes_nothing(api, tenancy, verb, error, field):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    before = snapshot(todo_id)
    message = api.error(token, verb, {"id": todo_id, "lease_token": claim["lease_token"], "error": error}, "invalid")
    assert message.startswith(f"{field}:"), message
    assert snapshot(todo_id) == before


def test_a_complete_batch_item_stores_its_error_and_get_todo_answers_it(api, tenancy):
    token = tenancy.worker_token
    (first, claim_1), (second, claim_2) = claimed(api, token), claimed(api, token)
    items = [
        {"id": first, "lease_token": claim_1["lease_token"], "error": ERROR},
        {"id": second, "lease_token": claim_2["lease_token"]},
    ]
    results = api.ok(token, "complete_batch", {"items": items})["results"]
    assert [r["ok"] for r in results] == [True, True]
    assert api.ok(token, "get_todo", {"id": first})["attempts"][0]["error"] == {**ERROR, "truncated": False}
    assert api.ok(token, "get_todo", {"id": second})["attempts"][0]["error"] is None


@pytest.mark.parametrize(("error", "field"), [("boom", "items[0].error"), ({"type": 7}, "items[0].error.type")])
def test_a_malformed_complete_batch_error_is_invalid_naming_the_item_and_writes_nothing(api, tenancy, error, field):
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    before = snapshot(todo_id)
    body = {"items": [{"id": todo_id, "lease_token": claim["lease_token"], "error": error}]}
    message = api.error(token, "complete_batch", body, "invalid")
    assert message.startswith(f"{field}:"), message
    assert snapshot(todo_id) == before


def test_a_report_refused_by_the_fence_stores_no_error(api, tenancy):
    token = tenancy.worker_token
    todo_id, _ = claimed(api, token)
    api.error(token, "fail", {"id": todo_id, "lease_token": "A" * 22, "error": ERROR}, "conflict")
    assert [a["error"] for a in attempts(todo_id)] == [None]


def test_the_openapi_document_describes_the_error_object(api, tenancy):
    document = api.client.get("/api/v1/openapi.json").json()
    for verb in ("fail", "complete"):
        body = document["paths"][f"/{verb}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body["properties"]["error"] == {"$ref": "#/components/schemas/ErrorReport"}
    batch = document["paths"]["/complete_batch"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert batch["properties"]["items"]["items"]["properties"]["error"] == {"$ref": "#/components/schemas/ErrorReport"}
    report = document["components"]["schemas"]["ErrorReport"]
    assert set(report["properties"]) == {"type", "message", "traceback"} and report["additionalProperties"] is False
    assert "last 64 KB" in report["description"]
    attempt = document["components"]["schemas"]["Attempt"]
    assert attempt["properties"]["error"]["anyOf"][0] == {"$ref": "#/components/schemas/AttemptError"}
    assert "error" in attempt["required"]
    # a real answer with an error validates against the document, and a wrong shape does not
    token = tenancy.worker_token
    todo_id, claim = claimed(api, token)
    api.ok(token, "fail", {"id": todo_id, "lease_token": claim["lease_token"], "error": ERROR})
    detail = api.ok(token, "get_todo", {"id": todo_id})
    _resolved(document, "/paths/~1get_todo/post/responses/200/content/application~1json/schema").validate(detail)
    with pytest.raises(jsonschema.ValidationError):
        _resolved(document, "/components/schemas/AttemptError").validate({"type": "E"})

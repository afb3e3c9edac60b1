"""Every error path of the transport: codes, statuses, messages naming the field, request ids."""

from __future__ import annotations

import dataclasses
import io
import json
import logging

import pytest

# At import, not inside a test: the first import sets Django's logging up (dictConfig), which
# would drop the handler caplog had just attached (the test passed only after another module
# had imported it first).
from board.asgi import application
from tests.support.api import asgi_call
from todos.agents.api import http as api_http
from todos.agents.api import verbs as api_verbs
from todos.agents.api.errors import TooLarge
from todos.core.errors import Invalid

MiB = 1024 * 1024


def post_raw(api, token, verb, content, **headers):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers}
    return api.client.post(f"/api/v1/{verb}", content=content, headers=headers)


def assert_error(response, status, code):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers.get("x-request-id")
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    return body["error"]["message"]


# --- body size -----------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_too_large(api, tenancy):
    body = json.dumps({"queue": "default", "title": "x", "payload": "a" * MiB}).encode()
    message = assert_error(post_raw(api, tenancy.worker_token, "create_for", body), 413, "too_large")
    assert str(MiB) in message
    assert api.ok(tenancy.worker_token, "list_todos")["todos"] == []


def test_a_chunked_body_over_the_limit_is_too_large(api, tenancy):
    def chunks():
        yield b'{"queue": "default", "title": "x", "payload": "'
        for _ in range(20):
            yield b"a" * 65536
        yield b'"}'

    response = post_raw(api, tenancy.worker_token, "create_for", chunks())
    assert_error(response, 413, "too_large")
    assert api.ok(tenancy.worker_token, "list_todos")["todos"] == []


def test_a_body_just_under_the_limit_is_accepted(api, tenancy):
    frame = json.dumps({"queue": "default", "title": "x", "payload": ""}).encode()
    body = frame[:-2] + b"a" * (MiB - len(frame) - 1000) + b'"}'
    response = post_raw(api, tenancy.worker_token, "create_for", body)
    # The body fits; the payload itself is under the store's 1 MiB JSON limit too.
    assert response.status_code == 201, response.text[:300]


def test_too_large_comes_before_authentication(api):
    response = post_raw(api, "bd_not-a-token", "list_todos", b"{" + b" " * (MiB + 10) + b"}")
    assert_error(response, 413, "too_large")


class FakeRequest:
    def __init__(self, body: bytes, declared: str | None):
        self.META = {} if declared is None else {"CONTENT_LENGTH": declared}
        self._stream = io.BytesIO(body)

    def read(self, n):
        return self._stream.read(n)


def test_the_view_checks_the_declared_length_and_the_bytes_it_reads(settings):
    """Behind another ASGI server (or the test client) the view itself enforces the limit."""
    settings.BOARD_MAX_BODY_BYTES = 1024
    with pytest.raises(TooLarge):
        api_http.read_body(FakeRequest(b"{}", "5000"))
    with pytest.raises(TooLarge):
        api_http.read_body(FakeRequest(b"x" * 1025, "10"))  # lies about its length
    with pytest.raises(TooLarge):
        api_http.read_body(FakeRequest(b"x" * 1025, None))
    assert api_http.read_body(FakeRequest(b"x" * 1024, None)) == b"x" * 1024
    with pytest.raises(Invalid) as raised:
        api_http.read_body(FakeRequest(b"{}", "ten"))
    assert raised.value.field == "Content-Length"


# --- malformed bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"{not json", "body"),
        (b'{"queue": "default",}', "body"),
        (b"[1, 2]", "body: must be a JSON object"),
        (b'"a string"', "body: must be a JSON object"),
        (b"null", "body: must be a JSON object"),
        (b'{"limit": NaN}', "body"),
        (b'{"limit": Infinity}', "body"),
        (b'{"limit": 1e999}', "limit"),  # names the field: see test_hostile_input.py
        (b"\xff\xfe{}", "body: must be UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "body"),
    ],
)
def test_malformed_json_is_invalid_naming_body_or_the_field(api, tenancy, content, fragment):
    message = assert_error(post_raw(api, tenancy.worker_token, "list_todos", content), 400, "invalid")
    assert message.startswith(fragment)


def test_a_lone_surrogate_is_invalid_naming_its_field(api, tenancy):
    content = b'{"queue": "default", "title": "x", "payload": {"k": "\\ud800"}}'
    message = assert_error(post_raw(api, tenancy.worker_token, "create_for", content), 400, "invalid")
    assert message.startswith("payload:")


def test_deeply_nested_payload_is_invalid(api, tenancy):
    payload = "[" * 300 + "]" * 300
    content = f'{{"queue": "default", "title": "x", "payload": {payload}}}'.encode()
    message = assert_error(post_raw(api, tenancy.worker_token, "create_for", content), 400, "invalid")
    assert message.startswith("payload:") and "nested" in message


# --- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "verb, body, field",
    [
        ("list_todos", {"bogus": 1}, "bogus"),
        ("list_todos", {"limit": 10, "zzz": 1, "aaa": 2}, "aaa"),
        ("create_for", {"queue": "default"}, "title"),
        ("create_for", {"title": "x"}, "queue"),
        ("create_for", {"queue": "default", "title": 5}, "title"),
        ("create_for", {"queue": "default", "title": ""}, "title"),
        ("create_for", {"queue": "default", "title": "   "}, "title"),
        ("create_for", {"queue": "default", "title": "x" * 501}, "title"),
        ("create_for", {"queue": "bad queue!", "title": "x"}, "queue"),
        ("create_for", {"queue": "default", "title": "x", "priority": 40000}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "priority": "high"}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": 0}, "max_attempts"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": 101}, "max_attempts"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": True}, "max_attempts"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": 2.5}, "max_attempts"),
        ("create_for", {"queue": "default", "title": "x", "kind": ["a"]}, "kind"),
        ("create_for", {"queue": "default", "title": "x\u0000"}, "title"),
        ("create_for", {"queue": "default", "title": "x", "payload": {"k": "\u0000"}}, "payload"),
        ("list_todos", {"state": "running"}, "state"),
        ("list_todos", {"limit": 0}, "limit"),
        ("list_todos", {"limit": 201}, "limit"),
        ("list_todos", {"dead_letter": "yes"}, "dead_letter"),
        ("list_todos", {"cursor": "not-a-cursor"}, "cursor"),
        ("get_todo", {}, "id"),
        ("get_todo", {"id": 7}, "id"),
        ("get_todo", {"id": "td_x", "attempts_limit": 51}, "attempts_limit"),
        ("claim_next", {"wait_seconds": 31}, "wait_seconds"),
        ("claim_next", {"wait_seconds": -1}, "wait_seconds"),
        ("claim_next", {"lease_ttl_seconds": 0}, "lease_ttl_seconds"),
        ("claim_next", {"lease_ttl_seconds": 86401}, "lease_ttl_seconds"),
        ("claim_next", {"require_fence": "true"}, "require_fence"),
        ("claim", {"id": "td_x", "claimant": 5}, "claimant"),
        ("heartbeat", {"id": "td_x", "lease_token": 5}, "lease_token"),
        ("complete", {"id": "td_x", "artifact": "ftp://x/y"}, "artifact"),
        ("complete", {"id": "td_x", "artifact": "javascript:alert(1)"}, "artifact"),
        ("fail", {"id": "td_x", "summary": {"a": 1}}, "summary"),
        ("release", {"id": "td_x", "result": {}}, "result"),
        ("claim_batch", {}, "max"),
        ("claim_batch", {"max": 101}, "max"),
        ("complete_batch", {"items": []}, "items"),
        ("complete_batch", {"items": [{"id": "td_a"}] * 101}, "items"),
        ("complete_batch", {"items": [{"id": "td_a"}, {"id": "td_b", "bogus": 1}]}, "items[1].bogus"),
        ("complete_batch", {"items": [{"id": "td_a"}, {}]}, "items[1].id"),
        ("complete_batch", {"items": [{"id": "td_a"}, {"id": "td_a"}]}, "items[1].id"),
        ("complete_batch", {"items": ["td_a"]}, "items[0]"),
        ("set_default_lease", {"default_lease_ttl_seconds": 86401}, "default_lease_ttl_seconds"),
        ("get_default_lease", {"x": 1}, "x"),
    ],
)
def test_bad_arguments_are_invalid_naming_the_field(api, tenancy, verb, body, field):
    message = api.error(tenancy.worker_token, verb, body, "invalid")
    assert message.startswith(f"{field}:"), message


def test_invalid_input_writes_nothing(api, tenancy):
    api.error(tenancy.worker_token, "create_for", {"queue": "default", "title": "x", "artifact": 1}, "invalid")
    api.error(tenancy.worker_token, "create_for", {"queue": "default", "title": "x", "max_attempts": 0}, "invalid")
    assert api.ok(tenancy.worker_token, "list_todos")["todos"] == []


def test_an_artifact_error_does_not_echo_the_value(api, tenancy):
    secret = "ftp://user:hunter2@example.com/x"
    message = api.error(tenancy.worker_token, "complete", {"id": "td_x", "artifact": secret}, "invalid")
    assert "hunter2" not in message


def test_optional_fields_may_be_null(api, tenancy):
    out = api.ok(
        tenancy.worker_token,
        "create_for",
        {
            "queue": "default",
            "title": "x",
            "kind": None,
            "source": None,
            "priority": None,
            "max_attempts": None,
            "idempotency_key": None,
            "endpoint": None,
            "payload": None,
        },
        status=201,
    )
    assert out["todo"]["priority"] == 0 and out["todo"]["max_attempts"] == 5
    assert (
        api.ok(tenancy.worker_token, "claim_next", {"queue": None, "wait_seconds": None, "require_fence": None})[
            "empty"
        ]
        is False
    )


def test_integral_floats_count_as_integers(api, tenancy):
    assert api.ok(tenancy.worker_token, "list_todos", {"limit": 5.0})["todos"] == []


# --- routing and methods -----------------------------------------------------------------------------


def test_an_unknown_verb_is_not_found(api, tenancy):
    for path in ("/api/v1/frobnicate", "/api/v1/claim_next/extra", "/api/v1/"):
        response = api.client.post(path, json={}, headers={"Authorization": f"Bearer {tenancy.worker_token}"})
        assert_error(response, 404, "not_found")


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_other_methods_on_a_verb_are_405_with_the_json_shape(api, tenancy, method):
    response = api.client.request(
        method, "/api/v1/claim_next", headers={"Authorization": f"Bearer {tenancy.worker_token}"}
    )
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"


def test_post_on_the_openapi_document_is_405(api):
    response = api.client.post("/api/v1/openapi.json", json={})
    assert_error(response, 405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


def test_every_answer_has_a_distinct_request_id(api, tenancy):
    ids = {api.call(tenancy.worker_token, "list_todos").headers["x-request-id"] for _ in range(3)}
    ids.add(api.call(None, "list_todos").headers["x-request-id"])
    assert len(ids) == 4


# --- internal errors (in process: a handler that breaks) -------------------------------------------------


def test_an_internal_error_is_logged_with_the_request_id_and_never_leaked(store_db, tenancy, monkeypatch, caplog):
    async def broken(call, args):
        raise RuntimeError("database password is hunter2")

    verb = api_verbs.VERBS["get_default_lease"]
    monkeypatch.setitem(api_verbs.VERBS, "get_default_lease", dataclasses.replace(verb, handler=broken))

    with caplog.at_level(logging.ERROR, logger="todos.agents.api"):
        (status, headers, content), _ = asgi_call(
            application, "/api/v1/get_default_lease", b"{}", token=tenancy.worker_token
        )
    assert status == 500
    body = json.loads(content)
    request_id = headers[b"x-request-id"].decode()
    assert body["error"]["code"] == "internal" and request_id in body["error"]["message"]
    assert "hunter2" not in content.decode()
    record = next(r for r in caplog.records if request_id in r.getMessage())
    assert record.exc_info and "hunter2" in str(record.exc_info[1])


def test_in_process_calls_enforce_the_body_limit_too(store_db, tenancy, settings):
    settings.BOARD_MAX_BODY_BYTES = 1024
    (status, _, content), _ = asgi_call(
        application, "/api/v1/list_todos", b"{" + b" " * 2000 + b"}", token=tenancy.worker_token
    )
    assert status == 413 and json.loads(content)["error"]["code"] == "too_large"

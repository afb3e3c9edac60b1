"""Hostile input never answers 500: integers past any range (and past Python's digit limit),
NUL and control characters in every string field, JSON nested past the documented limit, bytes
that are not UTF-8, garbage in headers. Each is ``400 invalid`` naming the field (or ``401`` for
the Authorization header), in the API's error shape, and writes nothing.
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from tests.api.test_errors import assert_error, post_raw
from tests.store.helpers import counts, snapshot
from todos.core.store.inputs import JSON_MAX_DEPTH

HUGE = "1" * 5000  # past Python's 4300-digit int conversion limit
BIG = str(2**70)  # parses, but fits no column


def refused(api, token, verb, content, field):
    """Post raw JSON; expect 400 invalid whose message names ``field``; return the message."""
    before = counts()
    if not isinstance(content, bytes):
        content = json.dumps(content).encode()
    message = assert_error(post_raw(api, token, verb, content), 400, "invalid")
    assert message.startswith(f"{field}:"), message
    assert counts() == before, "a refused request wrote something"
    return message


# --- integers out of range -------------------------------------------------------------------


def test_a_five_thousand_digit_priority_is_invalid_naming_priority(api, tenancy):
    content = b'{"queue": "default", "title": "x", "priority": ' + HUGE.encode() + b"}"
    refused(api, tenancy.worker_token, "create_for", content, "priority")


@pytest.mark.parametrize(
    "verb, template, field",
    [
        ("create_for", '{"queue": "default", "title": "x", "priority": %s}', "priority"),
        ("create_for", '{"queue": "default", "title": "x", "max_attempts": %s}', "max_attempts"),
        ("create_for", '{"queue": "default", "title": "x", "payload": {"n": %s}}', "payload"),
        ("list_todos", '{"limit": %s}', "limit"),
        ("get_todo", '{"id": "td_x", "attempts_limit": %s}', "attempts_limit"),
        ("claim_next", '{"lease_ttl_seconds": %s}', "lease_ttl_seconds"),
        ("claim_next", '{"wait_seconds": %s}', "wait_seconds"),
        ("claim", '{"id": "td_x", "lease_ttl_seconds": %s}', "lease_ttl_seconds"),
        ("heartbeat", '{"id": "td_x", "lease_ttl_seconds": %s}', "lease_ttl_seconds"),
        ("claim_batch", '{"max": %s}', "max"),
        ("complete", '{"id": "td_x", "result": [%s]}', "result"),
        ("set_default_lease", '{"default_lease_ttl_seconds": %s}', "default_lease_ttl_seconds"),
    ],
)
@pytest.mark.parametrize("number", [HUGE, "-" + HUGE, "1e999", "-1e999"], ids=["huge", "-huge", "1e999", "-1e999"])
def test_numbers_no_machine_can_hold_are_invalid_naming_the_field(api, tenancy, verb, template, field, number):
    message = refused(api, tenancy.worker_token, verb, (template % number).encode(), field)
    assert HUGE not in message  # named, not echoed


@pytest.mark.parametrize(
    "verb, body, field",
    [
        ("create_for", {"queue": "default", "title": "x", "priority": 32768}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "priority": -32769}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "priority": 2**63}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "priority": 1e300}, "priority"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": 2**64}, "max_attempts"),
        ("create_for", {"queue": "default", "title": "x", "max_attempts": -1}, "max_attempts"),
        ("list_todos", {"limit": 2**70}, "limit"),
        ("list_todos", {"limit": -(2**70)}, "limit"),
        ("get_todo", {"id": "td_x", "attempts_limit": 0}, "attempts_limit"),
        ("get_todo", {"id": "td_x", "attempts_limit": 2**70}, "attempts_limit"),
        ("claim_next", {"lease_ttl_seconds": 2**70}, "lease_ttl_seconds"),
        ("claim_next", {"wait_seconds": 1e300}, "wait_seconds"),
        ("claim_next", {"wait_seconds": -(2**70)}, "wait_seconds"),
        ("claim", {"id": "td_x", "lease_ttl_seconds": -1}, "lease_ttl_seconds"),
        ("heartbeat", {"id": "td_x", "lease_ttl_seconds": 2**70}, "lease_ttl_seconds"),
        ("claim_batch", {"max": 0}, "max"),
        ("claim_batch", {"max": 2**70}, "max"),
        ("set_default_lease", {"default_lease_ttl_seconds": 59}, "default_lease_ttl_seconds"),
        ("set_default_lease", {"default_lease_ttl_seconds": 2**70}, "default_lease_ttl_seconds"),
    ],
)
def test_integers_out_of_range_are_invalid_naming_the_field(api, tenancy, verb, body, field):
    refused(api, tenancy.worker_token, verb, body, field)


# --- NUL and control characters -----------------------------------------------------------------

HELD_VERBS = ("heartbeat", "complete", "fail", "release")


def string_fields():
    """(verb, body, field) for every string input of every verb, with ``{}`` where the bad text goes."""
    create = {"queue": "default", "title": "x"}
    cases = [
        ("create_for", {**create, "queue": "{}"}, "queue"),
        ("create_for", {**create, "title": "{}"}, "title"),
        ("create_for", {**create, "kind": "{}"}, "kind"),
        ("create_for", {**create, "source": "{}"}, "source"),
        ("create_for", {**create, "idempotency_key": "{}"}, "idempotency_key"),
        ("create_for", {**create, "assignee": "{}"}, "assignee"),
        ("create_for", {**create, "endpoint": "{}"}, "endpoint"),
        ("list_todos", {"queue": "{}"}, "queue"),
        ("list_todos", {"state": "{}"}, "state"),
        ("list_todos", {"cursor": "{}"}, "cursor"),
        ("get_todo", {"id": "{}"}, "id"),
        ("claim_next", {"queue": "{}"}, "queue"),
        ("claim", {"id": "{}"}, "id"),
        ("claim_batch", {"max": 1, "queue": "{}"}, "queue"),
        ("complete_batch", {"items": [{"id": "{}"}]}, "items[0].id"),
    ]
    for verb in HELD_VERBS:
        cases.append((verb, {"id": "{}"}, "id"))
        cases.append((verb, {"id": "HELD", "lease_token": "{}"}, "lease_token"))
        if verb != "heartbeat":
            cases.append((verb, {"id": "HELD", "artifact": "https://ci.example/{}"}, "artifact"))
    return cases


def _fill(value, text: str, held: str):
    if isinstance(value, dict):
        return {k: _fill(v, text, held) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, text, held) for v in value]
    if value == "HELD":
        return held
    return value.replace("{}", text) if isinstance(value, str) else value


@pytest.fixture
def held(api, tenancy):
    """A todo the worker holds (unfenced), for the verbs that act on one."""
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "held"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"]})
    return todo["id"]


@pytest.mark.parametrize(
    "text", ["a\x00b", "a\nb", "a\rb", "a\x1bb", "a\x7fb", "a\x85b"], ids=["nul", "lf", "cr", "esc", "del", "c1"]
)
@pytest.mark.parametrize("verb, body, field", string_fields(), ids=lambda v: v if isinstance(v, str) else "")
def test_control_characters_in_a_string_field_are_invalid_naming_it(api, tenancy, held, verb, body, field, text):
    before = snapshot(held)
    refused(api, tenancy.worker_token, verb, _fill(body, text, held), field)
    assert snapshot(held) == before


@pytest.mark.parametrize("verb", ["complete", "fail", "release"])
def test_nul_in_a_summary_is_invalid_but_newlines_are_prose(api, tenancy, held, verb):
    before = snapshot(held)
    refused(api, tenancy.worker_token, verb, {"id": held, "summary": "line one\x00"}, "summary")
    assert snapshot(held) == before
    api.ok(tenancy.worker_token, verb, {"id": held, "summary": "line one\nline two\ttabbed"})


@pytest.mark.parametrize(
    "field, payload",
    [
        ("payload", {"k": "a\x00b"}),
        ("payload", {"a\x00b": 1}),
        ("payload", [[{"deep": ["\x00"]}]]),
        ("payload", "\x00"),
    ],
)
def test_nul_anywhere_in_a_json_document_is_invalid_naming_it(api, tenancy, field, payload):
    refused(api, tenancy.worker_token, "create_for", {"queue": "default", "title": "x", field: payload}, field)


@pytest.mark.parametrize("verb", ["complete", "fail"])
def test_nul_in_a_result_is_invalid_and_the_todo_stays_held(api, tenancy, held, verb):
    before = snapshot(held)
    refused(api, tenancy.worker_token, verb, {"id": held, "result": {"log": "x\x00y"}}, "result")
    refused(
        api, tenancy.worker_token, "complete_batch", {"items": [{"id": held, "result": ["\x00"]}]}, "items[0].result"
    )
    assert snapshot(held) == before


def test_a_claimant_is_cleaned_not_refused(api, tenancy, held):
    """Control characters in a claimant are removed (it is a label for humans): docs/lifecycle.md,
    "Inputs the store cleans or rejects"."""
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "y"}, status=201)["todo"]
    api.ok(tenancy.worker_token, "claim", {"id": todo["id"], "claimant": "w\x00orker\n-7"})
    attempts = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["attempts"]
    assert attempts[0]["claimant"] == "worker-7"


def test_a_queue_name_with_a_newline_is_invalid_not_forbidden(api, tenancy):
    for verb, body in [
        ("create_for", {"queue": "default\n", "title": "x"}),
        ("list_todos", {"queue": "default\n"}),
        ("claim_next", {"queue": "default\n"}),
        ("claim_batch", {"queue": "default\n", "max": 1}),
    ]:
        refused(api, tenancy.worker_token, verb, body, "queue")


# --- nesting ------------------------------------------------------------------------------------


def nested(depth: int):
    value: object = 1
    for n in range(depth):
        value = [value] if n % 2 else {"k": value}
    return value


def test_a_payload_at_the_nesting_limit_is_accepted(api, tenancy):
    out = api.ok(
        tenancy.worker_token,
        "create_for",
        {"queue": "default", "title": "x", "payload": nested(JSON_MAX_DEPTH)},
        status=201,
    )
    assert out["todo"]["payload"] == nested(JSON_MAX_DEPTH)


@pytest.mark.parametrize("depth", [JSON_MAX_DEPTH + 1, 500, 5000, 100_000])
def test_a_payload_nested_past_the_limit_is_invalid_naming_payload(api, tenancy, depth):
    content = b'{"queue": "default", "title": "x", "payload": ' + b"[" * depth + b"]" * depth + b"}"
    message = refused(api, tenancy.worker_token, "create_for", content, "payload")
    assert f"{JSON_MAX_DEPTH} levels" in message


@pytest.mark.parametrize("depth", [JSON_MAX_DEPTH + 1, 5000])
def test_a_result_nested_past_the_limit_is_invalid_and_the_todo_stays_held(api, tenancy, held, depth):
    before = snapshot(held)
    deep = "[" * depth + "]" * depth
    refused(api, tenancy.worker_token, "complete", f'{{"id": "{held}", "result": {deep}}}'.encode(), "result")
    refused(api, tenancy.worker_token, "fail", f'{{"id": "{held}", "result": {deep}}}'.encode(), "result")
    field = "items[0].result" if depth < 1000 else "items"
    refused(
        api,
        tenancy.worker_token,
        "complete_batch",
        f'{{"items": [{{"id": "{held}", "result": {deep}}}]}}'.encode(),
        field,
    )
    assert snapshot(held) == before


def test_deep_nesting_in_an_unknown_field_or_a_string_field_is_invalid(api, tenancy):
    deep = b"[" * 5000 + b"]" * 5000
    refused(api, tenancy.worker_token, "list_todos", b'{"bogus": ' + deep + b"}", "bogus")
    refused(api, tenancy.worker_token, "list_todos", b'{"queue": ' + deep + b"}", "queue")
    refused(api, tenancy.worker_token, "list_todos", deep, "body")


# --- bytes that are not UTF-8 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b'{"queue": "default", "title": "caf\xe9"}',  # Latin-1
        b'{"queue": "default", "title": "\xed\xa0\x80"}',  # an encoded surrogate
        b'{"queue": "default", "title": "\xc0\xaf"}',  # overlong
        b"\xef\xbb\xbf{}",  # a byte order mark
        b'{"queue": "default", "title": "x"}\x00',
    ],
)
def test_a_body_that_is_not_utf8_json_is_invalid_naming_body(api, tenancy, content):
    refused(api, tenancy.worker_token, "create_for", content, "body")


def test_a_lone_surrogate_escape_is_invalid_naming_the_field(api, tenancy):
    refused(api, tenancy.worker_token, "create_for", b'{"queue": "default", "title": "\\udc00"}', "title")
    refused(api, tenancy.worker_token, "create_for", b'{"queue": "default", "title": "x", "kind": "\\ud800"}', "kind")


# --- headers --------------------------------------------------------------------------------------


def raw_request(url: str, head: bytes, body: bytes = b"{}") -> tuple[int, bytes]:
    """One HTTP/1.1 request written byte for byte (clients refuse to send these headers)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head + b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize(
    "authorization",
    [
        b"Bearer bd_\x01abc",
        b"Bearer bd_\x7fabc",
        b"Bearer bd_\xff\xfe",
        b"Bearer " + b"a" * 5000,
        b"Bearer\x00x",
        b"\xe2\x82\xac",
    ],
    ids=["ctl", "del", "latin1", "long", "nul", "utf8"],
)
def test_a_garbled_authorization_header_is_unauthorized_never_500(api, asgi_server, tenancy, authorization):
    before = counts()
    head = (
        b"POST /api/v1/create_for HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: "
        + authorization
        + b"\r\n"
    )
    status, body = raw_request(asgi_server.url, head, b'{"queue": "default", "title": "x"}')
    assert status in (400, 401), (status, body[:300])
    if status == 401:
        assert json.loads(body)["error"]["code"] == "unauthorized"
    assert counts() == before


@pytest.mark.parametrize(
    "header",
    [b"Content-Length-X: \x01", b"X-Anything: \xff\xfe\x00", b"Content-Type: application/json; charset=\x01"],
    ids=["ctl", "binary", "content-type"],
)
def test_garbage_in_other_headers_is_never_500(api, asgi_server, tenancy, header):
    head = (
        b"POST /api/v1/list_todos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + tenancy.worker_token.encode()
        + b"\r\n"
        + header
        + b"\r\n"
    )
    status, body = raw_request(asgi_server.url, head)
    assert status < 500, (status, body[:300])


def test_a_control_character_in_the_verb_path_is_not_found(api, tenancy):
    for path in ("/api/v1/claim%00", "/api/v1/%0Aclaim_next", "/api/v1/%FF%FE"):
        response = api.client.post(path, json={}, headers={"Authorization": f"Bearer {tenancy.worker_token}"})
        assert_error(response, 404, "not_found")


# --- the document says so ------------------------------------------------------------------------


def test_the_openapi_document_states_the_input_rules():
    from todos.agents.api.openapi import document

    doc = document()
    assert f"at most\n{JSON_MAX_DEPTH} levels deep" in doc["info"]["description"]
    create = doc["paths"]["/create_for"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert f"at most {JSON_MAX_DEPTH} levels" in create["payload"]["description"]
    assert create["queue"]["pattern"].startswith("^") and create["queue"]["pattern"].endswith("$")
    assert "\\u0000-\\u001f" in create["title"]["pattern"] and "\\u0000-\\u001f" in create["kind"]["pattern"]
    assert create["priority"]["minimum"] == -32768 and create["priority"]["maximum"] == 32767
    listing = doc["paths"]["/list_todos"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert listing["cursor"]["minLength"] == 1 and listing["cursor"]["pattern"]

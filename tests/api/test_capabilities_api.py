"""Required capabilities over HTTP: create_for takes ``requires``, the claims take
``capabilities`` (else the endpoint's defaults), todos show ``requires``; bad labels are refused
naming the field and write or claim nothing; the OpenAPI document describes them."""

from __future__ import annotations

import pytest

from tests import factories
from tests.support.api import eventually
from todos.core.db import execute, pool
from todos.core.store import endpoints as endpoint_store


def count(where: str = "true") -> int:
    with pool().connection() as conn:
        return conn.execute(f"SELECT count(*) AS n FROM todos WHERE {where}").fetchone()["n"]


def test_requires_round_trips_and_claims_honour_it(api, tenancy):
    token = tenancy.worker_token
    gpu = api.ok(token, "create_for", {"queue": "default", "title": "g", "requires": ["gpu", "cuda"]}, status=201)
    assert gpu["todo"]["requires"] == ["cuda", "gpu"]
    plain = api.ok(token, "create_for", {"queue": "default", "title": "p"}, status=201)["todo"]
    assert plain["requires"] == []
    # no capabilities presented (and none by default): only the plain todo
    assert api.ok(token, "claim_next", {})["todo"]["id"] == plain["id"]
    assert api.ok(token, "claim_next", {})["empty"] is True
    message = api.error(token, "claim", {"id": gpu["todo"]["id"], "capabilities": ["gpu"]}, "conflict")
    assert "does not present: cuda" in message
    took = api.ok(token, "claim_batch", {"max": 5, "capabilities": ["cuda", "gpu"]})["todos"]
    assert [c["todo"]["id"] for c in took] == [gpu["todo"]["id"]]
    assert api.ok(token, "get_todo", {"id": gpu["todo"]["id"]})["todo"]["requires"] == ["cuda", "gpu"]


def test_the_endpoints_default_capabilities_serve_a_claim_that_presents_none(api, tenancy):
    token = tenancy.worker_token
    todo = api.ok(token, "create_for", {"queue": "default", "title": "g", "requires": ["gpu"]}, status=201)["todo"]
    assert api.ok(token, "claim_next", {})["empty"] is True
    execute(endpoint_store.set_capabilities(None, tenancy.worker.endpoint.id, ["gpu"]))  # reaches the server
    assert api.ok(token, "claim_next", {"capabilities": ["other"]})["empty"] is True  # its own replace them
    assert eventually(lambda: api.ok(token, "claim_next", {"capabilities": None})["todo"]["id"]) == todo["id"]


BAD = [
    ("gpu", "must be an array"),
    ([f"l{n}" for n in range(17)], "at most 16 items, got 17"),
    (["x" * 65], "1 to 64 characters, got 65"),
    ([""], "1 to 64 characters"),
    ([7], "must be a string"),
    (["a b"], "must match"),
]


@pytest.mark.parametrize(("value", "problem"), BAD)
def test_bad_requires_is_refused_naming_the_field(api, tenancy, value, problem):
    body = {"queue": "default", "title": "t", "requires": value}
    message = api.error(tenancy.worker_token, "create_for", body, "invalid")
    assert message.startswith("requires") and problem in message
    assert count() == 0


@pytest.mark.parametrize(("value", "problem"), BAD)
@pytest.mark.parametrize("verb", ["claim_next", "claim_batch", "claim"])
def test_bad_capabilities_are_refused_naming_the_field(api, tenancy, verb, value, problem):
    todo = api.ok(tenancy.worker_token, "create_for", {"queue": "default", "title": "t"}, status=201)["todo"]
    body = {"claim_next": {}, "claim_batch": {"max": 2}, "claim": {"id": todo["id"]}}[verb]
    message = api.error(tenancy.worker_token, verb, {**body, "capabilities": value}, "invalid")
    assert message.startswith("capabilities") and problem in message
    assert count("state = 'claimed'") == 0


def test_openapi_describes_requires_and_capabilities(api, tenancy):
    doc = api.client.get("/api/v1/openapi.json").json()

    def body(verb):
        return doc["paths"][f"/{verb}"]["post"]["requestBody"]["content"]["application/json"]["schema"]

    requires = body("create_for")["properties"]["requires"]
    assert requires["maxItems"] == 16 and requires["items"]["maxLength"] == 64
    for verb in ("claim_next", "claim", "claim_batch"):
        capabilities = body(verb)["properties"]["capabilities"]
        assert capabilities["maxItems"] == 16 and "default capabilities" in capabilities["description"]
    assert "requires" in str(doc["components"]["schemas"])


def test_a_hand_off_keeps_requires(api, tenancy):
    other = factories.endpoint(tenancy.team, slug="gpu-worker", queues=("default",), capabilities=["gpu"])
    body = {"queue": "default", "title": "t", "requires": ["gpu"], "endpoint": "gpu-worker"}
    handed = api.ok(tenancy.worker_token, "create_for", body, status=201)["todo"]
    assert handed["requires"] == ["gpu"]
    assert api.ok(other.token, "claim_next", {})["todo"]["id"] == handed["id"]

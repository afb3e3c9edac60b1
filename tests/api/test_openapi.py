"""The OpenAPI 3.1 document: served without a token, valid, and generated from the verb table."""

from __future__ import annotations

import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from todos.agents.api import schemas
from todos.agents.api.verbs import VERBS
from todos.core.store.endpoints import SCOPE_VERBS


@pytest.fixture
def document(api):
    response = api.client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def test_the_document_is_valid_openapi_3_1(document):
    assert document["openapi"].startswith("3.1")
    validate_openapi(document)


def test_every_verb_is_a_post_operation_with_its_schemas(document):
    schedule_verbs = {
        "list_schedules",
        "create_schedule",
        "update_schedule",
        "fire_schedule",
        "pause_schedule",
        "resume_schedule",
        "delete_schedule",
    }
    assert (
        set(VERBS)
        == (set(SCOPE_VERBS) - {"schedules"}) | {"claim_batch", "complete_batch", "create_batch"} | schedule_verbs
    )
    for name, _verb in VERBS.items():
        operation = document["paths"][f"/{name}"]["post"]
        assert operation["operationId"] == name
        assert operation["security"] == [{"bearer": []}]
        assert {"400", "401", "403", "404", "409", "413", "500"} <= set(operation["responses"])
        assert operation["requestBody"]["content"]["application/json"]["schema"] is not None
        success = "201" if name == "create_for" else "200"
        assert operation["responses"][success]["content"]["application/json"]["schema"]
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["bearer"]["description"],
    }


def test_every_declared_schema_is_valid_json_schema():
    for verb in VERBS.values():
        jsonschema.Draft202012Validator.check_schema(verb.input)
        jsonschema.Draft202012Validator.check_schema(verb.output)
    jsonschema.Draft202012Validator.check_schema(schemas.ERROR)


def test_inputs_are_strict_everywhere():
    def objects(schema):
        if isinstance(schema, dict):
            if schema.get("type") == "object":
                yield schema
            for value in schema.values():
                yield from objects(value)
        elif isinstance(schema, list):
            for item in schema:
                yield from objects(item)

    for verb in VERBS.values():
        found = list(objects(verb.input))
        assert found and all(o.get("additionalProperties") is False for o in found), verb.name


def _resolved(document, pointer: str):
    registry = Registry().with_resource(
        "urn:board", Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return jsonschema.Draft202012Validator({"$ref": f"urn:board#{pointer}"}, registry=registry)


def test_real_answers_match_the_documents_schemas(document, api, tenancy):
    """The $ref'd document says the same as the verb table: real answers validate against both."""
    token = tenancy.worker_token
    created = api.ok(token, "create_for", {"queue": "default", "title": "x"}, status=201)
    claimed = api.ok(token, "claim_next", {"require_fence": True})
    detail = api.ok(token, "get_todo", {"id": created["todo"]["id"]})
    error = api.call(token, "claim", {"id": created["todo"]["id"]}).json()
    for verb, body, status in (
        ("create_for", created, "201"),
        ("claim_next", claimed, "200"),
        ("get_todo", detail, "200"),
        ("claim_next", {"empty": True}, "200"),
    ):
        _resolved(document, f"/paths/~1{verb}/post/responses/{status}/content/application~1json/schema").validate(body)
    _resolved(document, "/components/schemas/Error").validate(error)
    with pytest.raises(jsonschema.ValidationError):  # and the document's schemas do reject things
        _resolved(document, "/components/schemas/TodoRow").validate({**created["todo"], "endpoint_id": "x"})


def test_the_document_needs_no_token_and_mentions_summaries_are_data(document):
    assert "not instructions" in document["info"]["description"]

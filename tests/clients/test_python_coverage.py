"""The Python client covers the API: a method per verb taking every input field, TypedDicts with
every output field, and the sync client written from the async one (clients/python)."""

from __future__ import annotations

import inspect
import sys
import typing
from pathlib import Path

import pytest

from todos.agents.api import schemas
from todos.agents.api.verbs import VERBS

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
sys.path.insert(0, str(CLIENT))

import board_client  # noqa: E402
from board_client import types  # noqa: E402

# Where a method's argument is named otherwise than the field (none today), or a verb's answer is
# unwrapped to one of its keys.
RENAMED: dict[str, dict[str, str]] = {}


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("client", [board_client.Client, board_client.AsyncClient])
def test_every_verb_has_a_method_taking_every_field(client, verb):
    method = getattr(client, verb, None)
    assert method is not None, f"{client.__name__} has no method for the verb {verb}"
    parameters = set(inspect.signature(method).parameters) - {"self"}
    fields = {RENAMED.get(verb, {}).get(name, name) for name in VERBS[verb].input["properties"]}
    assert fields - parameters == set(), f"{client.__name__}.{verb} lacks {sorted(fields - parameters)}"
    assert parameters - fields == set(), (
        f"{client.__name__}.{verb} takes what the API does not: {sorted(parameters - fields)}"
    )
    required = set(VERBS[verb].input.get("required", ()))
    positional = {
        name
        for name, p in inspect.signature(method).parameters.items()
        if name != "self" and p.default is inspect.Parameter.empty
    }
    assert positional == required, f"{verb}: required {sorted(required)}, the method requires {sorted(positional)}"


def keys_of(typed_dict) -> set[str]:
    return set(typing.get_type_hints(typed_dict))


@pytest.mark.parametrize(
    ("typed_dict", "schema"),
    [
        (types.Todo, schemas.TODO_ROW),
        (types.TodoWithResult, VERBS["get_todo"].output["properties"]["todo"]),
        (types.Attempt, VERBS["get_todo"].output["properties"]["attempts"]["items"]),
        (types.TodoDetail, VERBS["get_todo"].output),
        (types.TodoPage, VERBS["list_todos"].output),
        (types.Created, VERBS["create_for"].output),
        (types.BatchCreated, VERBS["create_batch"].output["properties"]["results"]["items"]),
        (types.BatchResult, VERBS["complete_batch"].output["properties"]["results"]["items"]),
        (types.BatchClaim, schemas.BATCH_CLAIM),
        (types.Lease, VERBS["get_default_lease"].output),
        (types.Reported, VERBS["complete"].output),
        (types.Schedule, VERBS["list_schedules"].output["properties"]["schedules"]["items"]),
        (types.SchedulePage, VERBS["list_schedules"].output),
    ],
)
def test_every_answer_field_has_a_typed_key(typed_dict, schema):
    assert keys_of(typed_dict) == set(schema["properties"]), typed_dict.__name__


def test_a_claim_has_every_key_of_claim_next_and_claim():
    variant = next(v for v in schemas.CLAIM_NEXT["anyOf"] if "todo" in v["properties"])
    assert keys_of(types.Claim) == set(variant["properties"]) == set(schemas.CLAIM["properties"]) | {"empty"}


def test_the_sync_client_is_written_from_the_async_one():
    sys.path.insert(0, str(CLIENT))
    import generate_sync

    assert (CLIENT / "board_client" / "_sync_client.py").read_text() == generate_sync.formatted(
        generate_sync.render()
    ), "clients/python/board_client/_sync_client.py is stale: run python clients/python/generate_sync.py"

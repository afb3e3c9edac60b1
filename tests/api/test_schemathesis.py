"""Property-based conformance: schemathesis drives every operation of the OpenAPI document against
the live server with a valid token, with inputs that fit the schemas (positive) and inputs that do
not (negative). No answer may be a 5xx, fall outside its declared schema, or accept bad input.

Bounded (30 examples per verb and mode, derandomized) so the default run stays fast.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests import factories
from todos.agents.api.openapi import document
from todos.agents.api.verbs import VERBS

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
EXAMPLES_PER_VERB = 30


@pytest.fixture(scope="module")
def operations():
    loaded = schemathesis.openapi.from_dict(document())
    found = {}
    for result in loaded.get_all_operations():
        operation = result.ok()
        found[operation.path.lstrip("/")] = operation
    return found


@pytest.fixture
def fuzz_token(store_db):
    team = factories.team()
    vended = factories.endpoint(team, slug="fuzzer", queues=("default", "other"))
    factories.endpoint(team, slug="sibling", queues=("default",))
    return vended.token


def _short_waits(case) -> None:
    """A generated long poll would hold the run for up to 30 s: keep waits token-sized."""
    body = case.body
    if case.path == "/claim_next" and isinstance(body, dict):
        wait = body.get("wait_seconds")
        if isinstance(wait, (int, float)) and not isinstance(wait, bool) and 0 < wait <= 30:
            body["wait_seconds"] = 0.01


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["positive", "negative"])
@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_operation_conforms(verb, mode, operations, asgi_server, fuzz_token):
    operation = operations[verb]

    @settings(
        max_examples=EXAMPLES_PER_VERB,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def conforms(case):
        _short_waits(case)
        case.call_and_validate(
            base_url=f"{asgi_server.url}/api/v1",
            headers={"Authorization": f"Bearer {fuzz_token}"},
            checks=CHECKS,
            timeout=15,
        )

    conforms()


# --- the coverage phase -------------------------------------------------------------------------
#
# Where the fuzzing above draws random inputs, schemathesis' coverage phase walks every schema
# keyword deterministically: each boundary (minLength - 1, maximum + 1, an empty cursor), each
# pattern, each missing required field, each wrong type and each other HTTP method. Positive
# cases must be accepted (no 400: "schema-valid request rejected"), negative ones refused, and
# nothing may answer 5xx or outside the document. This is what keeps the OpenAPI document saying
# exactly what the API enforces.

COVERAGE_CHECKS = [*CHECKS, positive_data_acceptance]


def _coverage_only():
    config = SchemathesisConfig(seed=EXAMPLES_PER_VERB)  # fixed: the same cases every run
    config.projects.default.phases.update(phases=["coverage"])
    return config


coverage = schemathesis.openapi.from_dict(document(), config=_coverage_only()).exclude(path="/openapi.json")


def _unique_batch_ids(case) -> None:
    """One rule JSON Schema cannot state (``uniqueItems`` compares whole items): complete_batch
    names each id at most once. The document says so in prose; a generated valid batch that
    repeats an id keeps its first item, so it stays what it claims to be, a valid request."""
    body = case.body
    if case.path != "/complete_batch" or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return
    items, seen = [], set()
    for item in body.get("items") or ():
        key = item.get("id") if isinstance(item, dict) else None
        if isinstance(key, str) and key in seen:
            continue
        seen.add(key)
        items.append(item)
    body["items"] = items


def _run_at_in_its_window(case) -> None:
    """Two rules of ``create_for`` a schema cannot state (docs/api.md, "Run later"): ``run_at`` is
    at most 60 s in the past and at most a year ahead of *now*, and ``run_at`` and
    ``delay_seconds`` are not given together. A generated valid request keeps its ``run_at`` as a
    time an hour from now and drops ``delay_seconds`` beside it, so it stays a valid request."""
    body = case.body
    if case.path != "/create_for" or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return
    if "run_at" in body:
        body["run_at"] = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
        body.pop("delay_seconds", None)


def _schedule_in_its_rules(case) -> None:
    """Rules of ``create_schedule`` and ``update_schedule`` a schema cannot state (docs/api.md,
    "Schedules"): the cron expression parses, the time zone is an IANA name, the queue is in the
    caller's scope and the name is free in its team. A generated valid request keeps its other
    fields and gets a cron expression, zone and queue that are, and a fresh name, so it stays a
    valid request (the refusals of each are tests/api/test_schedules_api.py's)."""
    body = case.body
    if case.path not in ("/create_schedule", "/update_schedule") or not case.meta.generation.mode.is_positive:
        return
    if not isinstance(body, dict):
        return
    body.update(cron="*/5 * * * *", timezone="UTC", queue="default", name=f"fuzz {uuid4()}")


@pytest.mark.slow
@coverage.parametrize()
@settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_the_coverage_phase_finds_no_mismatch(case, asgi_server, fuzz_token):
    _short_waits(case)
    _unique_batch_ids(case)
    _run_at_in_its_window(case)
    _schedule_in_its_rules(case)
    case.call_and_validate(
        base_url=f"{asgi_server.url}/api/v1",
        headers={"Authorization": f"Bearer {fuzz_token}"},
        checks=COVERAGE_CHECKS,
        timeout=15,
    )

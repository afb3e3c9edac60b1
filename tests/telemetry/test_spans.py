"""The server's spans (docs/telemetry.md): statements named as the SQL catalog names them, sweeps,
relay passes; and nothing at all without an endpoint."""

from __future__ import annotations

import pytest

from tests import factories
from todos.core import telemetry
from todos.core.db import Statement, connect, execute
from todos.core.store import agent as agent_store
from todos.live.relay import relay_pass
from todos.ops import loops
from todos.ops.sql_capture import Call
from todos.ops.sql_catalog import AGENT, CATALOG


def _built_statements():
    for name, entry in CATALOG.items():
        if isinstance(entry, Call) and entry.capture is None:
            yield name, entry


def test_every_statement_built_while_tracing_carries_its_catalog_name(spans):
    checked = 0
    for name, entry in _built_statements():
        built = entry()
        if not isinstance(built, Statement):
            continue
        # a variant of an entry (``store.agent.claim.capabilities``) carries its function's name
        assert name == built.name or name.startswith(built.name + "."), (name, built.name)
        checked += 1
    assert checked > 50


def test_without_tracing_a_statement_has_no_name_and_no_span_is_made():
    assert not telemetry.enabled()
    assert agent_store.claim_next(AGENT).name == ""
    with telemetry.span("anything") as current:
        assert current is None


def test_no_endpoint_builds_no_provider():
    assert telemetry.build_provider({}) is None
    assert telemetry.build_provider({"OTEL_SERVICE_NAME": "x"}) is None
    disabled = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
    assert telemetry.build_provider(disabled) is None


def test_an_endpoint_builds_an_otlp_provider_named_board_unless_told_otherwise():
    provider = telemetry.build_provider({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    try:
        assert provider.resource.attributes["service.name"] == "board"
    finally:
        provider.shutdown()
    named = telemetry.build_provider(
        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_SERVICE_NAME": "board-eu"}
    )
    try:
        assert "service.name" not in named.resource.attributes or named.resource.attributes["service.name"] != "board"
    finally:
        named.shutdown()


def test_a_store_statement_runs_in_a_span_with_its_catalog_name(store_db, spans):
    team = factories.team()
    worker = factories.endpoint(team, slug="worker", queues=("default",))
    execute(agent_store.create(factories.agent(worker), queue="default", title="t"))
    [span] = [s for s in spans.get_finished_spans() if s.name == "store.agent.create"]
    assert span.attributes["db.system"] == "postgresql"
    assert span.attributes["db.operation.name"] == "store.agent.create"
    assert span.kind.name == "CLIENT"


def test_a_sweep_and_a_relay_pass_each_make_a_span(store_db, spans):
    sweep = loops.Sweep(name="requeue", interval=lambda: 1.0, run=lambda: 0, batch=10)
    loops.run_sweep_once(sweep)
    with connect() as conn:
        relay_pass(conn)
    names = [s.name for s in spans.get_finished_spans()]
    assert "sweep requeue" in names and "relay pass" in names
    relay = next(s for s in spans.get_finished_spans() if s.name == "relay pass")
    assert {"board.relay.taken", "board.relay.sent"} <= set(relay.attributes)


@pytest.mark.parametrize(
    "traceparent, trace_id",
    [("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736"), (None, None)],
)
def test_trace_id_of(traceparent, trace_id):
    assert telemetry.trace_id_of(traceparent) == trace_id

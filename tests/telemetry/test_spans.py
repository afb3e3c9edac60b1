"""The server's spans (docs/telemetry.md): statements named as the SQL catalog names them, sweeps,
relay passes; and nothing at all without an endpoint."""

from __future__ import annotations

import psycopg
import pytest
from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import StatusCode

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


def test_a_statement_span_is_never_the_current_span_and_keeps_its_parent(store_db, spans):
    seen = Statement(sql="SELECT 1 AS one", params={}, finish=lambda rows: trace.get_current_span(), name="store.t.one")
    with telemetry.span("outer") as outer:
        current = execute(seen)
    assert current is outer  # the statement ran with its parent current, not itself
    statement = next(s for s in spans.get_finished_spans() if s.name == "store.t.one")
    assert statement.parent is not None and statement.parent.span_id == outer.get_span_context().span_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # and the outer span was detached


def test_a_failing_statement_marks_its_span_an_error_with_the_exception(store_db, spans):
    failing = Statement(sql="SELECT 1 / 0 AS never", params={}, finish=lambda rows: rows, name="store.t.divide")
    with pytest.raises(psycopg.errors.DivisionByZero):
        execute(failing)
    [span] = [s for s in spans.get_finished_spans() if s.name == "store.t.divide"]
    assert span.status.status_code == StatusCode.ERROR
    assert [event.name for event in span.events] == ["exception"]
    assert span.attributes["db.operation.name"] == "store.t.divide"


def test_an_exception_out_of_a_current_span_is_recorded_and_the_context_restored(spans):
    with pytest.raises(RuntimeError), telemetry.span("sweep x") as current:
        assert trace.get_current_span() is current
        raise RuntimeError("boom")
    assert trace.get_current_span() is trace.INVALID_SPAN
    [span] = spans.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR
    assert span.events[0].attributes["exception.message"] == "boom"


def test_the_none_exporter_makes_and_batches_spans_and_sends_none():
    provider = telemetry.build_provider(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": "none"}
    )
    try:
        processor = provider._active_span_processor._span_processors[0]
        assert type(processor).__name__ == "BatchSpanProcessor"
        assert processor._batch_processor._exporter.export([]) == SpanExportResult.SUCCESS
        with provider.get_tracer("t").start_as_current_span("made") as made:
            assert made.is_recording()
        assert provider.force_flush(5_000)
    finally:
        provider.shutdown()


@pytest.mark.parametrize("value", ["otlp", " OTLP ", ""])
def test_the_otlp_exporter_is_the_default(value):
    provider = telemetry.build_provider(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": value}
    )
    try:
        exporter = provider._active_span_processor._span_processors[0]._batch_processor._exporter
        assert type(exporter).__name__ == "OTLPSpanExporter"
    finally:
        provider.shutdown()


@pytest.mark.parametrize("value", ["console", "zipkin", "otlp,console"])
def test_an_exporter_board_does_not_ship_is_refused_naming_the_variable(value):
    with pytest.raises(ImproperlyConfigured, match="OTEL_TRACES_EXPORTER must be one of otlp, none"):
        telemetry.build_provider({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": value})


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

"""One trace from producer to worker (docs/telemetry.md), across a real Board that exports over
OTLP and the Python client's worker tracing in this process: the producer's span is the parent of
the create verb's span; the worker's ``process <queue>`` span is a child of the context stored
with the todo; the complete verb's span is a child of the worker's."""

from __future__ import annotations

import threading

import pytest
from board_client import Client, Worker
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests import factories
from tests.support.live_server import start_server, stop_server
from tests.telemetry import collector as otlp

pytestmark = pytest.mark.slow

CONSUMER = 5  # OTLP's SPAN_KIND_CONSUMER
SERVER = 2


@pytest.fixture(scope="module")
def client_spans():
    """The client side's spans, in memory: this process's global provider (set once)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        pytest.skip("another test set this process's tracer provider first")
    return exporter


@pytest.fixture(scope="module")
def traced_board(django_db_setup):
    collector, receiver = otlp.start()
    server = start_server(
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        OTEL_BSP_SCHEDULE_DELAY="50",
        OTEL_SERVICE_NAME="board-under-test",
    )
    try:
        yield server, collector
    finally:
        stop_server(server)
        receiver.shutdown()


def ids(traceparent: str) -> tuple[str, str]:
    """A traceparent's trace and span ids (its flags vary with the SDK: sampled, random)."""
    _, trace_id, span_id, _ = traceparent.split("-")
    return trace_id, span_id


def hex_ids(span) -> tuple[str, str]:
    context = span.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def test_one_trace_runs_from_the_producer_through_the_worker_to_complete(store_db, traced_board, client_spans):
    server, collector = traced_board
    team = factories.team()
    vended = factories.endpoint(team, slug="traced", queues=("default",))
    tracer = trace.get_tracer("producer-test")

    with tracer.start_as_current_span("produce") as producer, Client(server.url, vended.token) as client:
        created = client.create_for("default", "traced work")["todo"]
    trace_id, producer_id = hex_ids(producer)
    assert ids(created["traceparent"]) == (trace_id, producer_id)

    worker = Worker(server.url, vended.token, wait_seconds=1, claimant="traced")
    worker.add_handler("default", lambda job: "done")
    guard = threading.Timer(60, worker.stop)
    guard.start()
    try:
        assert worker.run(max_todos=1) == 0, worker.fatal
    finally:
        guard.cancel()

    [process] = [s for s in client_spans.get_finished_spans() if s.name == "process default"]
    assert process.kind.name == "CONSUMER"
    assert process.attributes["messaging.operation.type"] == "process"
    assert process.attributes["messaging.message.id"] == created["id"]
    process_trace, process_id = hex_ids(process)
    # the worker's span is a child of the context stored with the todo: the producer's span
    assert process_trace == trace_id
    assert process.parent is not None and format(process.parent.span_id, "016x") == producer_id

    create_span = collector.wait_for("create_for")
    complete_span = collector.wait_for("complete")
    assert create_span.service == "board-under-test"
    assert create_span.kind == SERVER and create_span.trace_id == trace_id
    assert create_span.parent_span_id == producer_id
    assert create_span.attributes["messaging.operation.type"] == "create"
    assert create_span.attributes["messaging.destination.name"] == "default"
    assert create_span.attributes["messaging.message.id"] == created["id"]
    assert complete_span.trace_id == trace_id
    assert complete_span.parent_span_id == process_id
    assert complete_span.attributes["messaging.operation.type"] == "settle"

    # the statements run inside their verbs' spans, named as the SQL catalog names them
    statement = collector.wait_for("store.agent.create")
    assert statement.parent_span_id == create_span.span_id
    assert statement.attributes["db.system"] == "postgresql"
    assert statement.attributes["db.operation.name"] == "store.agent.create"
    complete_statement = collector.wait_for("store.agent.complete")
    assert complete_statement.parent_span_id == complete_span.span_id

    # the claim answered the stored context; the attempt keeps the worker's
    claim = next(s for s in collector.named("claim_next") if s.attributes.get("messaging.message.id") == created["id"])
    assert claim.attributes["messaging.operation.type"] == "receive"
    with Client(server.url, vended.token) as client:
        detail = client.get_todo(created["id"])
    assert detail["todo"]["traceparent"] == created["traceparent"]
    assert ids(detail["attempts"][0]["traceparent"]) == (trace_id, process_id)

"""The verb spans of the HTTP transport, in process (docs/telemetry.md): a child of the
``traceparent`` header, the messaging attributes, one name for paths outside the verb table, and
a link from a settle verb to the worker's context sent in the body."""

from __future__ import annotations

import json

from board.asgi import application
from tests import factories
from tests.support.api import asgi_call

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"


def call(verb: str, body: dict, token: str, traceparent: str | None = None):
    extra = [(b"traceparent", traceparent.encode())] if traceparent else []
    (status, _, content), _ = asgi_call(
        application, f"/api/v1/{verb}", json.dumps(body).encode(), token=token, extra_headers=extra
    )
    return status, json.loads(content)


def test_a_verb_span_is_the_headers_child_and_names_the_queue_and_the_todo(store_db, spans):
    team = factories.team()
    vended = factories.endpoint(team, slug="spans", queues=("default",))
    status, out = call("create_for", {"queue": "default", "title": "t"}, vended.token, PRODUCER)
    assert status == 201
    [span] = [s for s in spans.get_finished_spans() if s.name == "create_for"]
    assert span.kind.name == "SERVER"
    assert format(span.context.trace_id, "032x") == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert span.parent is not None and format(span.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert span.attributes["messaging.system"] == "board"
    assert span.attributes["messaging.operation.type"] == "create"
    assert span.attributes["messaging.destination.name"] == "default"
    assert span.attributes["messaging.message.id"] == out["todo"]["id"]
    assert span.attributes["http.response.status_code"] == 201
    statement = next(s for s in spans.get_finished_spans() if s.name == "store.agent.create")
    assert statement.parent is not None and statement.parent.span_id == span.context.span_id


def test_a_settle_verb_links_the_workers_context_sent_in_the_body(store_db, spans):
    team = factories.team()
    vended = factories.endpoint(team, slug="spans", queues=("default",))
    _, out = call("create_for", {"queue": "default", "title": "t", "traceparent": PRODUCER}, vended.token)
    _, claimed = call("claim_next", {}, vended.token)
    assert claimed["todo"]["traceparent"] == PRODUCER
    status, _ = call("complete", {"id": out["todo"]["id"], "traceparent": WORKER}, vended.token)
    assert status == 200
    [span] = [s for s in spans.get_finished_spans() if s.name == "complete"]
    assert span.attributes["messaging.operation.type"] == "settle"
    assert [(format(link.context.trace_id, "032x"), format(link.context.span_id, "016x")) for link in span.links] == [
        ("11111111111111111111111111111111", "2222222222222222")
    ]


def test_a_path_outside_the_verb_table_is_one_span_name(store_db, spans):
    status, _ = call("no_such_verb_at_all", {}, "x")
    assert status == 404
    assert [s.name for s in spans.get_finished_spans() if s.kind.name == "SERVER"] == ["unknown_verb"]

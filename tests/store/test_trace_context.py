"""The trace context the store keeps (docs/lifecycle.md, "Trace context"): the producer's on the
todo, written by create and create_batch and answered by every claim; the worker's on the attempt
that complete or fail closes. A malformed one is refused naming the field and writes nothing; a
report the guard refuses writes nothing either."""

from __future__ import annotations

import pytest

from tests.store.helpers import attempts, row, snapshot
from todos.core.db import execute
from todos.core.store import Conflict, Invalid
from todos.core.store import agent as agent_store

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"
REPORTS = {"fail": agent_store.fail, "complete": agent_store.complete}


def test_create_keeps_the_producers_context_and_the_claim_answers_it(agent):
    created = execute(agent_store.create(agent, queue="default", title="t", traceparent=PRODUCER)).todo
    assert created.traceparent == PRODUCER and row(created.id)["traceparent"] == PRODUCER
    claim = execute(agent_store.claim_next(agent))
    assert claim is not None and claim.todo.traceparent == PRODUCER


def test_create_batch_keeps_each_items_context(agent):
    items = [{"queue": "default", "title": "a", "traceparent": PRODUCER}, {"queue": "default", "title": "b"}]
    out = execute(agent_store.create_batch(agent, items))
    assert [row(item.id)["traceparent"] for item in out] == [PRODUCER, None]


@pytest.mark.parametrize("bad", ["00-abc", PRODUCER.upper(), "ff" + PRODUCER[2:], 42])
def test_a_malformed_context_is_refused_naming_the_field_and_nothing_is_written(agent, bad):
    with pytest.raises(Invalid) as refused:
        agent_store.create(agent, queue="default", title="t", traceparent=bad)
    assert refused.value.field == "traceparent"
    items = [{"queue": "default", "title": "a"}, {"queue": "default", "title": "b", "traceparent": bad}]
    with pytest.raises(Invalid) as refused:
        agent_store.create_batch(agent, items)
    assert refused.value.field == "items[1].traceparent"


@pytest.mark.parametrize("verb", REPORTS)
def test_a_report_keeps_the_workers_context_on_the_attempt_it_closes(agent, verb):
    todo = execute(agent_store.create(agent, queue="default", title="t", traceparent=PRODUCER)).todo
    execute(agent_store.claim(agent, todo.id))
    execute(REPORTS[verb](agent, todo.id, summary="x", traceparent=WORKER))
    [attempt] = attempts(todo.id)
    assert attempt["traceparent"] == WORKER and attempt["ended_at"] is not None
    assert row(todo.id)["traceparent"] == PRODUCER  # the todo keeps its producer's


@pytest.mark.parametrize("verb", REPORTS)
def test_a_refused_report_writes_nothing_its_context_included(agent, verb):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    execute(agent_store.claim(agent, todo.id, require_fence=True))
    before = snapshot(todo.id)
    with pytest.raises(Conflict):
        execute(REPORTS[verb](agent, todo.id, lease_token="A" * 22, traceparent=WORKER))
    assert snapshot(todo.id) == before
    with pytest.raises(Invalid) as refused:
        REPORTS[verb](agent, todo.id, traceparent="nope")
    assert refused.value.field == "traceparent"


def test_complete_batch_keeps_each_items_context_on_its_attempt(agent):
    todos = [execute(agent_store.create(agent, queue="default", title=t)).todo for t in ("a", "b")]
    for todo in todos:
        execute(agent_store.claim(agent, todo.id))
    items = [{"id": todos[0].id, "traceparent": WORKER}, {"id": todos[1].id}]
    assert [r.ok for r in execute(agent_store.complete_batch(agent, items))] == [True, True]
    assert [attempts(t.id)[0]["traceparent"] for t in todos] == [WORKER, None]


def test_complete_batch_refuses_a_malformed_item_context_naming_the_item_and_writes_nothing(agent):
    todos = [execute(agent_store.create(agent, queue="default", title=t)).todo for t in ("a", "b")]
    for todo in todos:
        execute(agent_store.claim(agent, todo.id))
    before = [snapshot(t.id) for t in todos]
    with pytest.raises(Invalid) as refused:
        agent_store.complete_batch(agent, [{"id": todos[0].id}, {"id": todos[1].id, "traceparent": "00-abc"}])
    assert refused.value.field == "items[1].traceparent"
    assert [snapshot(t.id) for t in todos] == before

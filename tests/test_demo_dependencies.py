"""The demo's producer enqueues a release's notes as a graph in one create_batch: a plan, the
parts after it, the merge after every part."""

from __future__ import annotations

import random

from todos.core.db import execute
from todos.core.store import agent as agent_store


def test_a_release_is_a_plan_then_parts_then_a_merge(store_db):
    from tests import factories
    from todos.ops.demo import BOUND_QUEUE, release_items

    team = factories.team("demo-graph")
    scope = factories.agent(factories.endpoint(team, slug="summarizer", queues=(BOUND_QUEUE,)))
    items = release_items(scope, random.Random(5))
    results = execute(agent_store.create_batch(scope, items))
    todos = [r.todo for r in results]
    parts = len(todos) - 2
    assert [t.parents_left for t in todos] == [0, *[1] * parts, parts]
    assert all(t.blocked for t in todos[1:])
    again = execute(agent_store.create_batch(scope, items))
    assert not any(r.created for r in again)

"""The demo's traces: most seeded todos carry a producer's trace context, and the seeded
completions a worker's context in the same trace, so the drawer has trace ids to show."""

from __future__ import annotations

import random

import pytest

from tests import factories
from todos.core import db
from todos.core.store import inputs


@pytest.mark.usefixtures("store_db")
def test_the_seeded_todos_and_their_completions_carry_one_trace():
    from todos.ops.demo import seed

    seed(factories.user("demo-admin", superuser=True), todos=120, rng=random.Random(5))
    with db.connect() as conn:
        todos = conn.execute("SELECT traceparent FROM todos").fetchall()
        done = conn.execute(
            """SELECT t.traceparent AS producer, a.traceparent AS worker
               FROM todos t JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total
               WHERE t.state = 'done' AND t.traceparent IS NOT NULL"""
        ).fetchall()
    traced = [r["traceparent"] for r in todos if r["traceparent"]]
    assert 0 < len(traced) < len(todos)  # most, not all: an untraced producer shows a dash
    assert all(inputs.traceparent(t) == t for t in traced)
    assert done and all(r["worker"].split("-")[1] == r["producer"].split("-")[1] for r in done)
    assert all(r["worker"] != r["producer"] for r in done)

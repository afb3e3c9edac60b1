"""The demo's failures carry error objects a real worker would send: a class, a message, and a
traceback ending in ``type: message``; the seeded dead letters show them."""

from __future__ import annotations

import random

import pytest

from tests import factories
from todos.core import db
from todos.core.store import inputs
from todos.ops.demo import FAILURES, failure


def test_every_simulated_failure_is_a_realistic_error_object():
    seen = set()
    rng = random.Random(7)
    for _ in range(200):
        summary, error = failure(rng)
        seen.add(error["type"])
        assert summary and "{n}" not in summary and "{n}" not in error["message"]
        assert error["traceback"].startswith("Traceback (most recent call last):\n  File ")
        assert error["traceback"].endswith(f"{error['type']}: {error['message']}")
        stored = inputs.error_object(error)
        assert stored is not None and stored.obj["truncated"] is False
    assert len(seen) == len(FAILURES)


@pytest.mark.usefixtures("store_db")
def test_the_seeded_dead_letters_failed_with_error_objects():
    from todos.ops.demo import seed

    seed(factories.user("demo-admin", superuser=True), todos=120, rng=random.Random(3))
    with db.connect() as conn:
        rows = conn.execute(
            """SELECT a.error FROM todos t JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total
               WHERE t.state = 'failed' AND a.outcome = 'failed'"""
        ).fetchall()
    assert rows and all(r["error"] and r["error"]["traceback"].startswith("Traceback") for r in rows)

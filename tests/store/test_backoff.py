"""The retry window after a reported failure: now() + min(30 s · 2^(attempt − 1), 15 min).

``next_retry_at`` and ``updated_at`` are both set from the failing statement's ``now()``, so their
difference is the backoff exactly, measured on the database's clock.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.store.helpers import make_due, row
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def backoff_after_failing(agent, todo_id: str) -> timedelta:
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.fail(agent, todo_id))
    r = row(todo_id)
    return r["next_retry_at"] - r["updated_at"]


def test_backoff_doubles_from_thirty_seconds(agent):
    todo_id = execute(agent_store.create(agent, queue="default", title="flaky", max_attempts=10)).todo.id
    seen = []
    for _ in range(6):
        seen.append(backoff_after_failing(agent, todo_id))
        make_due(todo_id)
    assert seen == [timedelta(seconds=s) for s in (30, 60, 120, 240, 480, 900)]


@pytest.mark.parametrize("attempt", [7, 30, 60, 99])
def test_backoff_is_capped_at_fifteen_minutes_for_any_attempt(agent, attempt):
    """Budget spent on releases (which keep ``attempt``) brings a todo to a high attempt number."""
    todo_id = execute(agent_store.create(agent, queue="default", title="stubborn", max_attempts=100)).todo.id
    for _ in range(attempt - 1):
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.release(agent, todo_id))
    assert backoff_after_failing(agent, todo_id) == timedelta(minutes=15)
    assert row(todo_id)["attempt"] == attempt


def test_a_human_fail_uses_the_same_backoff(world):
    todo_id = execute(agent_store.create(world.agent, queue="default", title="x")).todo.id
    for expected in (30, 60):
        execute(human_store.claim(world.human, todo_id))
        execute(human_store.fail(world.human, todo_id))
        r = row(todo_id)
        assert r["next_retry_at"] - r["updated_at"] == timedelta(seconds=expected)
        make_due(todo_id)

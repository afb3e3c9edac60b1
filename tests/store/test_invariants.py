"""``tests.support.invariants``: the query the tests and the benchmarks trust to say "the lifecycle holds"
must find each kind of break. Each is planted inside a transaction that is rolled back."""

from __future__ import annotations

import pytest

from tests import factories
from tests.support.invariants import broken_counts, broken_lifecycle
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store

pytestmark = pytest.mark.usefixtures("store_db")

BREAKS = {
    # a pending todo with an open attempt
    "open attempt on a pending todo": "UPDATE todo_attempts SET ended_at = NULL, outcome = NULL, disposition = NULL "
    "WHERE todo_id = %(done)s",
    # a claimed todo whose lease has no open attempt
    "claimed without an open attempt": "UPDATE todo_attempts SET ended_at = now(), outcome = 'released', "
    "disposition = 'requeued' WHERE todo_id = %(claimed)s",
    # an attempt numbered past the todo's count
    "attempt past the count": "UPDATE todos SET attempts_total = 0 WHERE id = %(done)s",
}


@pytest.mark.parametrize("plant", BREAKS.values(), ids=BREAKS.keys())
def test_each_kind_of_break_is_found(plant):
    agent = factories.agent(factories.endpoint(factories.team()))
    done = execute(agent_store.create(agent, queue="default", title="done")).todo
    execute(agent_store.claim(agent, done.id))
    execute(agent_store.complete(agent, done.id))
    claimed = execute(agent_store.create(agent, queue="default", title="claimed")).todo
    execute(agent_store.claim(agent, claimed.id))
    with connect() as conn:
        assert broken_lifecycle(conn) == []
        with conn.transaction(force_rollback=True):
            conn.execute("SET CONSTRAINTS todo_attempts_one_open DEFERRED")
            conn.execute(plant, {"done": done.id, "claimed": claimed.id})
            found = {row["id"] for row in broken_lifecycle(conn)}
        assert found and found <= {done.id, claimed.id}
        assert broken_lifecycle(conn) == []  # rolled back
    execute(agent_store.complete(agent, claimed.id))


COUNT_BREAKS = {
    "a count off by one": "UPDATE todo_counts SET n = n + 1 WHERE state = 'done'",
    "a count missing": "DELETE FROM todo_counts WHERE state = 'claimed'",
    "a todo written behind the store's back": "UPDATE todos SET state = 'canceled' WHERE id = %(done)s",
    "a log row that never happened": "INSERT INTO change_log "
    "(team_id, endpoint_id, todo_id, queue, op, state_before, state_after) "
    "SELECT e.team_id, e.id, 'td_x', 'default', 'create', NULL, 'pending' FROM endpoints e",
}


@pytest.mark.parametrize("plant", COUNT_BREAKS.values(), ids=COUNT_BREAKS.keys())
def test_each_kind_of_count_break_is_found(plant, relay):
    """The counts' invariant (counts + the log not yet relayed = GROUP BY over todos)."""
    agent = factories.agent(factories.endpoint(factories.team()))
    done = execute(agent_store.create(agent, queue="default", title="done")).todo
    execute(agent_store.claim(agent, done.id))
    execute(agent_store.complete(agent, done.id))
    claimed = execute(agent_store.create(agent, queue="default", title="claimed")).todo
    execute(agent_store.claim(agent, claimed.id))
    factories.relayed()
    with relay.stopped(), connect() as conn:
        assert broken_counts(conn) == []
        with conn.transaction(force_rollback=True):
            conn.execute(plant, {"done": done.id})
            assert broken_counts(conn)
        assert broken_counts(conn) == []  # rolled back
    execute(agent_store.complete(agent, claimed.id))

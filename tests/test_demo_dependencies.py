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


def test_the_seed_leaves_one_release_waiting_and_one_canceled_with_everything_downstream(store_db):
    from tests import factories
    from todos.core.db import connect
    from todos.ops.demo import BOUND_QUEUE, seed

    seed(factories.user("demo-admin", superuser=True), todos=20, rng=random.Random(3))
    with connect() as conn:
        rows = conn.execute(
            """SELECT todo_board_state(t.state, t.next_retry_at) AS state, count(*) AS n,
                      count(a.id) FILTER (WHERE a.detail ? 'downstream_of') AS audited
               FROM todos t LEFT JOIN audit_log a ON a.todo_id = t.id AND a.action = 'todo.cancel'
               WHERE t.queue = %s AND t.kind = 'doc' GROUP BY 1""",
            (BOUND_QUEUE,),
        ).fetchall()
    by_state = {r["state"]: (r["n"], r["audited"]) for r in rows}
    canceled, audited = by_state["canceled"]
    assert canceled >= 5 and audited == canceled  # the plan, its parts and the merge, each audited
    assert by_state["blocked"][0] >= 4 and by_state["pending"][0] >= 1

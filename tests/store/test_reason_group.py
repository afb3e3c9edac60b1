"""The stored reason group (``todos.failure_reason_group``) of every statement that fails a todo is
the group the Dead letters page computes from its last attempt, so the "failed with" filter lists
exactly the todos a group counts."""

from __future__ import annotations

import pytest

from tests.store.helpers import lapse, sql
from todos.core import db
from todos.core.db import execute
from todos.core.selectors.failure_reason import FINGERPRINT
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")

# Every failed todo: its stored group beside the Dead letters page's expression over its last attempt.
GROUPS_SQL = f"""
SELECT d.id, d.failure_reason_group AS stored, {FINGERPRINT} AS computed
FROM todos d LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
WHERE d.state = 'failed'
ORDER BY d.id"""


def stored_and_computed() -> dict[str, tuple[str | None, str]]:
    return {r["id"]: (r["stored"], r["computed"]) for r in sql(GROUPS_SQL)}


def claimed(agent, **kw) -> str:
    todo = execute(agent_store.create(agent, queue="default", title="t", **kw)).todo
    execute(agent_store.claim(agent, todo.id))
    return todo.id


def test_an_agents_fail_stores_the_group_of_its_error_summary_or_result(world):
    reports = [
        {"error": {"type": "app.SyncError", "message": "refused by 10.0.0.7\nframe", "traceback": "x"}},
        {"error": {"message": "  disk full on 0xdeadbeef42  "}, "summary": "ignored"},
        {"summary": "timeout after 30s for 3f2b1c9e-1d2a-4b5c-8d9e-0a1b2c3d4e5f"},
        {"result": {"error": "ValueError 12"}},
        {},
    ]
    ids = []
    for report in reports:
        todo_id = claimed(world.agent, max_attempts=1)
        execute(agent_store.fail(world.agent, todo_id, **report))
        ids.append(todo_id)
    retry = claimed(world.agent, max_attempts=3)
    execute(agent_store.fail(world.agent, retry, error={"type": "KeyError", "message": "'user'"}))
    groups = stored_and_computed()
    assert [groups[i][0] for i in ids] == [
        "app.syncerror: refused by #.#.#.#",
        "disk full on <hex>",
        "timeout after #s for <uuid>",
        "valueerror #",
        "(no reason recorded)",
    ]
    assert groups[retry][0] == "keyerror: 'user'"  # a retry window is failed too
    assert all(stored == computed for stored, computed in groups.values())


def test_the_group_is_written_again_by_a_later_failure(world):
    todo_id = claimed(world.agent, max_attempts=2)
    execute(agent_store.fail(world.agent, todo_id, error={"type": "First"}))
    sql("UPDATE todos SET next_retry_at = now() WHERE id = %s", (todo_id,))
    execute(background_store.requeue_due_retries())
    execute(agent_store.claim(world.agent, todo_id))
    execute(agent_store.fail(world.agent, todo_id, error={"type": "Second"}))
    assert stored_and_computed()[todo_id] == ("second", "second")


def test_a_humans_fail_a_reap_a_timeout_and_a_revoke_store_the_same_group_as_the_page(world):
    by_human = execute(agent_store.create(world.agent, queue="default", title="h", max_attempts=1)).todo.id
    execute(human_store.claim(world.human, by_human))
    execute(human_store.fail(world.human, by_human, note="looked broken"))

    reaped = claimed(world.agent, max_attempts=1)
    lapse(reaped)
    assert execute(background_store.reap()).ids == (reaped,)

    timed = claimed(world.agent, timeout_seconds=60, max_attempts=1)
    with db.connect() as conn:
        conn.execute(
            """WITH t AS (UPDATE todos SET claimed_at = claimed_at - interval '61 seconds'
                          WHERE id = %(id)s RETURNING id, attempts_total)
               UPDATE todo_attempts a SET claimed_at = a.claimed_at - interval '61 seconds'
               FROM t WHERE a.todo_id = t.id AND a.seq = t.attempts_total""",
            {"id": timed},
        )
    assert execute(background_store.time_out()).ids == (timed,)

    # a pending todo whose earlier attempt failed with an error: the revoke keeps that reason
    revoked_earlier = claimed(world.agent, max_attempts=3)
    execute(agent_store.fail(world.agent, revoked_earlier, error={"type": "Flaky", "message": "once"}))
    revoked_fresh = execute(agent_store.create(world.agent, queue="default", title="r")).todo.id
    execute(endpoint_store.revoke(world.admin, world.agent.endpoint_id, note="leaked"))

    groups = stored_and_computed()
    assert groups[by_human][0] == "looked broken"  # its note is the attempt's summary
    assert groups[reaped][0] == "(no reason recorded)"
    assert groups[timed][0] == "timed_out: ran past its run-time limit of # seconds"
    assert groups[revoked_earlier][0] == "flaky: once"
    assert groups[revoked_fresh][0] == "endpoint_revoked"
    assert all(stored == computed for stored, computed in groups.values())


def test_the_migration_backfill_matches_the_statements(world):
    """Rows failed before the column existed get the same group from the migration's backfill."""
    todo_id = claimed(world.agent, max_attempts=1)
    execute(agent_store.fail(world.agent, todo_id, error={"type": "Old", "message": "1"}, summary="s"))
    sql("UPDATE todos SET failure_reason_group = NULL WHERE id = %s", (todo_id,))
    from pathlib import Path

    text = Path(__file__).resolve().parents[2].joinpath("todos/sql/0029_search_indexes.sql").read_text()
    backfill = text[text.index("UPDATE todos t SET failure_reason_group") :].split(";")[0]
    sql(backfill)
    assert stored_and_computed()[todo_id] == ("old: #", "old: #")

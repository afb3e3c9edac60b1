"""Bulk run now (``waiting.run_now_many``), one statement over many scheduled todos: each still
pending with its time to come, on a team where the person acts, is made claimable now and audited
on its own; any other row is skipped and reported, never an error."""

from __future__ import annotations

import pytest

from tests.store.helpers import one, run_threads, sql
from todos.core.db import execute
from todos.core.errors import Invalid
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store
from todos.core.store import waiting


def scheduled(world, agent=None, delay: int = 3600, **kwargs):
    return execute(
        agent_store.create(agent or world.agent, queue="default", title="later", delay_seconds=delay, **kwargs)
    ).todo


def test_runs_each_scheduled_todo_now_and_audits_each(world):
    todos = [scheduled(world) for _ in range(3)]
    ids = [t.id for t in todos]
    outcome = execute(waiting.run_now_many(world.human, ids, note="release train"))
    assert outcome.changed == tuple(ids) and outcome.skipped == ()
    assert sql("SELECT next_retry_at FROM todos WHERE id = ANY(%s)", [ids]) == [{"next_retry_at": None}] * 3
    audits = sql("SELECT todo_id, actor, note, detail FROM audit_log WHERE action = 'todo.run_now' ORDER BY todo_id")
    assert [a["todo_id"] for a in audits] == sorted(ids)
    assert {(a["actor"], a["note"]) for a in audits} == {("olive", "release train")}
    assert all(a["detail"]["new"] == {"run_at": None} and a["detail"]["old"]["run_at"] for a in audits)
    claimed = execute(agent_store.claim_next(world.agent, queue="default", claimant="w"))
    assert claimed is not None  # claimable now


def test_skips_what_is_not_scheduled_in_the_future_or_not_the_persons(world):
    waiting_todo = scheduled(world)
    plain = execute(agent_store.create(world.agent, queue="default", title="now")).todo  # pending, no time
    canceled = scheduled(world)
    execute(human_store.cancel(world.human, canceled.id))
    foreign = scheduled(world, agent=world.foreign_agent)
    ids = [waiting_todo.id, plain.id, canceled.id, foreign.id, "td_nosuch"]
    outcome = execute(waiting.run_now_many(world.human, ids))
    assert outcome.changed == (waiting_todo.id,)
    assert outcome.skipped == (plain.id, canceled.id, foreign.id, "td_nosuch")
    assert sql("SELECT next_retry_at FROM todos WHERE id = %s", [foreign.id])[0]["next_retry_at"] is not None
    assert one("SELECT count(*) AS n FROM audit_log WHERE action = 'todo.run_now'")["n"] == 1


def test_a_todo_whose_time_was_reached_is_skipped(world):
    due = scheduled(world)
    sql("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s RETURNING id", [due.id])
    outcome = execute(waiting.run_now_many(world.human, [due.id]))
    assert outcome.changed == () and outcome.skipped == (due.id,)


def test_a_viewer_runs_nothing(world):
    todo = scheduled(world)
    outcome = execute(waiting.run_now_many(world.viewer, [todo.id]))
    assert outcome.changed == () and outcome.skipped == (todo.id,)
    assert one("SELECT count(*) AS n FROM audit_log WHERE action = 'todo.run_now'")["n"] == 0


@pytest.mark.parametrize(
    ("ids", "message"),
    [(["td_x"] * 1001, "ids: at most 1000 ids per statement"), ([7], "ids: must be a string")],
)
def test_bad_ids_are_refused_before_anything_is_written(world, ids, message):
    with pytest.raises(Invalid) as refused:
        execute(waiting.run_now_many(world.human, ids))
    assert message in refused.value.message


def test_two_bulk_run_nows_at_once_run_each_todo_once(world):
    ids = [scheduled(world).id for _ in range(20)]

    def work(i, barrier):
        barrier.wait()
        return execute(waiting.run_now_many(world.human, ids if i == 0 else list(reversed(ids))))

    first, second = run_threads(2, work)
    assert not isinstance(first, BaseException) and not isinstance(second, BaseException), (first, second)
    assert sorted(first.changed + second.changed) == sorted(ids)
    assert one("SELECT count(*) AS n FROM audit_log WHERE action = 'todo.run_now'")["n"] == 20

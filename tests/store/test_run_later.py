"""Run later: a todo created with ``run_at`` or ``delay_seconds`` waits for its time in
``next_retry_at`` (the retry window's column), no claim takes it before, and operators run it now,
reschedule it or edit it, each audited with the old and new values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import relayed
from tests.store.helpers import audit, row, snapshot, sql
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import waiting as waiting_store


def later(seconds: int = 3600) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def make_time_due(todo_id: str) -> None:
    """Setup only: move a scheduled todo's time into the past (the clock moving forward)."""
    sql("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo_id,))


def board_counts(endpoint_id) -> dict:
    relayed()
    rows = sql("SELECT state, n FROM todo_counts WHERE endpoint_id = %s AND n <> 0", (endpoint_id,))
    return {r["state"]: r["n"] for r in rows}


def test_a_scheduled_todo_is_pending_with_its_time_and_no_claim_takes_it(agent):
    scheduled = execute(agent_store.create(agent, queue="default", title="later", run_at=later())).todo
    assert scheduled.state == "pending" and scheduled.scheduled
    assert abs((scheduled.next_retry_at - datetime.now(UTC)).total_seconds() - 3600) < 5
    assert execute(agent_store.claim_next(agent)) is None
    with pytest.raises(Conflict):
        execute(agent_store.claim(agent, scheduled.id))
    assert execute(agent_store.claim_batch(agent, max=10)) == []
    assert board_counts(agent.endpoint_id) == {"scheduled": 1}


def test_delay_seconds_schedules_too_and_zero_means_now(agent):
    delayed = execute(agent_store.create(agent, queue="default", title="d", delay_seconds=120)).todo
    assert delayed.scheduled
    now = execute(agent_store.create(agent, queue="default", title="n", delay_seconds=0)).todo
    assert not now.scheduled
    assert execute(agent_store.claim_next(agent)).todo.id == now.id


def test_a_due_scheduled_todo_is_claimed_before_the_sweep_and_logged_from_scheduled(agent):
    todo = execute(agent_store.create(agent, queue="default", title="due", run_at=later(60))).todo
    make_time_due(todo.id)
    claim = execute(agent_store.claim_next(agent))
    assert claim.todo.id == todo.id and claim.todo.next_retry_at is None
    assert board_counts(agent.endpoint_id) == {"claimed": 1}


def test_the_requeue_sweep_makes_due_scheduled_work_pending(agent):
    due = execute(agent_store.create(agent, queue="default", title="due", run_at=later(60))).todo
    waiting = execute(agent_store.create(agent, queue="default", title="wait", run_at=later(600))).todo
    make_time_due(due.id)
    outcome = execute(background_store.requeue_due_retries())
    assert outcome.ids == (due.id,)
    assert row(due.id)["next_retry_at"] is None and row(due.id)["state"] == "pending"
    assert row(waiting.id)["next_retry_at"] is not None
    assert board_counts(agent.endpoint_id) == {"scheduled": 1, "pending": 1}
    assert execute(agent_store.claim_next(agent)).todo.id == due.id


def test_a_run_at_just_past_is_now(agent):
    todo = execute(agent_store.create(agent, queue="default", title="t", run_at=later(-20))).todo
    assert not todo.scheduled


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"run_at": "tomorrow"}, "run_at", "RFC 3339"),
        ({"run_at": "2026-13-45T10:00:00Z"}, "run_at", "not a valid date"),
        ({"run_at": "2026-12-02T10:00:00"}, "run_at", "RFC 3339"),
        ({"run_at": 1234}, "run_at", "string"),
        ({"run_at": "2020-01-01T00:00:00Z"}, "run_at", "in the past"),
        ({"run_at": "2099-01-01T00:00:00+02:00"}, "run_at", "one year ahead"),
        ({"delay_seconds": -1}, "delay_seconds", "from 0"),
        ({"delay_seconds": 400 * 86400}, "delay_seconds", "from 0"),
        ({"delay_seconds": "10"}, "delay_seconds", "integer"),
        ({"delay_seconds": 10, "run_at": "2099-01-01T00:00:00Z"}, "run_at", "not both"),
        ({"concurrency_key": "x" * 201}, "concurrency_key", "at most 200"),
        ({"concurrency_key": "a\nb"}, "concurrency_key", "control"),
    ],
)
def test_bad_times_and_keys_are_refused_naming_the_field_and_write_nothing(agent, kwargs, field, words):
    with pytest.raises(Invalid) as exc:
        agent_store.create(agent, queue="default", title="t", **kwargs)
    assert exc.value.field == field and words in exc.value.problem
    assert sql("SELECT count(*) AS n FROM todos")[0]["n"] == 0


def test_run_now_makes_it_claimable_audits_old_and_new_and_wakes_nothing_twice(agent, human):
    todo = execute(agent_store.create(agent, queue="default", title="t", run_at=later())).todo
    ran = execute(waiting_store.run_now(human, todo.id))
    assert not ran.scheduled
    entry = audit(todo.id)[-1]
    assert entry["action"] == "todo.run_now" and entry["actor"] == "olive"
    assert entry["detail"]["old"]["run_at"] is not None and entry["detail"]["new"] == {"run_at": None}
    assert board_counts(agent.endpoint_id) == {"pending": 1}
    assert execute(agent_store.claim_next(agent)).todo.id == todo.id
    with pytest.raises(Conflict, match="only a scheduled todo"):
        execute(waiting_store.run_now(human, todo.id))


def test_run_now_of_an_unscheduled_todo_is_a_conflict_that_changes_nothing(agent, human):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    before = snapshot(todo.id)
    with pytest.raises(Conflict):
        execute(waiting_store.run_now(human, todo.id))
    assert snapshot(todo.id) == before


def test_reschedule_moves_the_time_either_way(agent, human):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    moved = execute(waiting_store.reschedule(human, todo.id, delay_seconds=600))
    assert moved.scheduled
    assert board_counts(agent.endpoint_id) == {"scheduled": 1}
    entry = audit(todo.id)[-1]
    assert entry["action"] == "todo.reschedule"
    assert entry["detail"]["old"] == {"run_at": None} and entry["detail"]["new"]["run_at"] is not None
    target = later(7200)
    again = execute(waiting_store.reschedule(human, todo.id, run_at=target))
    assert abs((again.next_retry_at - datetime.fromisoformat(target)).total_seconds()) < 1
    back = execute(waiting_store.reschedule(human, todo.id))
    assert not back.scheduled


def test_reschedule_refuses_a_bad_time_and_claimed_work(agent, human):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    with pytest.raises(Invalid, match="run_at"):
        waiting_store.reschedule(human, todo.id, run_at="2020-01-01T00:00:00Z")
    execute(agent_store.claim_next(agent))
    before = snapshot(todo.id)
    with pytest.raises(Conflict, match="only a pending todo"):
        execute(waiting_store.reschedule(human, todo.id, delay_seconds=60))
    assert snapshot(todo.id) == before


def test_edit_changes_only_the_named_fields_and_audits_old_and_new(agent, human):
    todo = execute(
        agent_store.create(agent, queue="default", title="old title", payload={"a": 1}, priority=3, max_attempts=4)
    ).todo
    edited = execute(
        waiting_store.edit(
            human,
            todo.id,
            {"title": "new title", "payload": {"a": 2}, "priority": -5, "max_attempts": 9, "run_at": later()},
        )
    )
    assert (edited.title, edited.payload, edited.priority, edited.max_attempts) == ("new title", {"a": 2}, -5, 9)
    assert edited.scheduled and edited.assignee is None
    detail = audit(todo.id)[-1]["detail"]
    assert detail["old"] == {
        "title": "old title",
        "payload": {"a": 1},
        "priority": 3,
        "max_attempts": 4,
        "run_at": None,
    }
    assert detail["new"]["title"] == "new title" and detail["new"]["payload"] == {"a": 2}
    assert detail["new"]["run_at"] is not None
    assignee = execute(waiting_store.edit(human, todo.id, {"assignee": "human:42", "run_at": ""}))
    assert assignee.assignee == "human:42" and not assignee.scheduled
    assert assignee.title == "new title"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({}, "changes"),
        ({"state": "done"}, "state"),
        ({"title": ""}, "title"),
        ({"priority": 10**6}, "priority"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"assignee": "bob"}, "assignee"),
        ({"run_at": "2020-01-01T00:00:00Z"}, "run_at"),
        ({"payload": {"a": "\x00"}}, "payload"),
    ],
)
def test_edit_refuses_bad_input_naming_the_field(agent, human, changes, field):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    before = snapshot(todo.id)
    with pytest.raises(Invalid) as exc:
        waiting_store.edit(human, todo.id, changes)
    assert exc.value.field == field
    assert snapshot(todo.id) == before


def test_edit_is_for_waiting_work_and_members_who_act(world, agent, human):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo
    with pytest.raises(Forbidden):
        execute(waiting_store.edit(world.viewer, todo.id, {"title": "x"}))
    with pytest.raises(Exception) as exc:
        execute(waiting_store.edit(world.outsider, todo.id, {"title": "x"}))
    assert exc.value.__class__.__name__ == "NotFound"
    execute(agent_store.claim_next(agent))
    with pytest.raises(Conflict, match="only a pending todo"):
        execute(waiting_store.edit(human, todo.id, {"title": "x"}))
    assert row(todo.id)["title"] == "t"


def test_canceling_a_scheduled_todo_clears_its_time(agent, human):
    from todos.core.store import human as human_store

    todo = execute(agent_store.create(agent, queue="default", title="t", run_at=later())).todo
    canceled = execute(human_store.cancel(human, todo.id))
    assert canceled.state == "canceled" and canceled.next_retry_at is None
    assert board_counts(agent.endpoint_id) == {"canceled": 1}

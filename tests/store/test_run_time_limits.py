"""Run-time limits: the sweep that ends an attempt which ran too long while its holder heartbeated,
the heartbeat refused past the limit, the queue's default, and the inputs that set them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests import factories
from tests.store.helpers import attempts, audit, counts, one, row, run_threads, sql
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid, NotFound, queue_settings
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.live.relay import DRIFT_SQL


def new(agent, **kw) -> str:
    kw.setdefault("queue", "default")
    return execute(agent_store.create(agent, title="t", **kw)).todo.id


def claimed(agent, **kw) -> str:
    todo_id = new(agent, **kw)
    execute(agent_store.claim(agent, todo_id))
    return todo_id


def overrun(todo_id: str, seconds: float) -> None:
    """Setup only: pretend the todo's open attempt began ``seconds`` ago (its lease still held)."""
    with db.connect() as conn:
        n = conn.execute(
            """WITH t AS (UPDATE todos SET claimed_at = claimed_at - make_interval(secs => %(s)s)
                          WHERE id = %(id)s AND state = 'claimed' RETURNING id, attempts_total)
               UPDATE todo_attempts a SET claimed_at = a.claimed_at - make_interval(secs => %(s)s)
               FROM t WHERE a.todo_id = t.id AND a.seq = t.attempts_total""",
            {"id": todo_id, "s": seconds},
        ).rowcount
    assert n == 1, f"{todo_id} is not claimed"


def flow() -> tuple[int, int, int]:
    """The charts' rollup of every queue, once the relay has read the change log: how many attempts
    completed, failed and died (a timed-out attempt counts as failed)."""
    factories.relayed()
    r = one(
        """SELECT coalesce(sum(completed), 0) AS completed, coalesce(sum(failed), 0) AS failed,
                  coalesce(sum(died), 0) AS died
           FROM todo_flow WHERE grain = 'minute' AND queue = ''"""
    )
    return r["completed"], r["failed"], r["died"]


def counted(state: str) -> int:
    """The relay's exact count of todos in a Board state, once it has read the change log."""
    factories.relayed()
    return one("SELECT coalesce(sum(n), 0) AS n FROM todo_counts WHERE state = %s", (state,))["n"]


# --- the sweep --------------------------------------------------------------------------------


def test_the_sweep_ends_an_overdue_attempt_timed_out_and_schedules_a_retry_like_a_failure(agent):
    todo_id = claimed(agent, timeout_seconds=60, max_attempts=3)
    overrun(todo_id, 61)
    out = execute(background_store.time_out())
    assert out.ids == (todo_id,)
    r = row(todo_id)
    assert (r["state"], r["owner"], r["lease_expires_at"], r["completed_at"], r["attempt"]) == (
        "failed",
        None,
        None,
        None,
        1,
    )
    # the backoff of a reported failure at attempt 1: 30 seconds
    assert r["next_retry_at"] - r["updated_at"] == timedelta(seconds=30)
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"], a["ended_at"]) == ("timed_out", "retry_scheduled", r["updated_at"])
    assert a["error"] == {
        "type": "timed_out",
        "message": "ran past its run-time limit of 60 seconds",
        "truncated": False,
    }
    assert (counted("claimed"), counted("retry"), flow()) == (0, 1, (0, 1, 0))
    assert execute(background_store.time_out()).count == 0  # ended once


def test_the_sweep_dead_letters_at_max_attempts(agent):
    todo_id = claimed(agent, timeout_seconds=5, max_attempts=1)
    overrun(todo_id, 10)
    assert execute(background_store.time_out()).ids == (todo_id,)
    r = row(todo_id)
    assert (r["state"], r["next_retry_at"]) == ("failed", None) and r["completed_at"] == r["updated_at"]
    [a] = attempts(todo_id)
    assert (a["outcome"], a["disposition"]) == ("timed_out", "dead_lettered")
    assert (counted("claimed"), counted("dead"), flow()) == (0, 1, (0, 1, 0))


def test_a_todo_within_its_limit_or_without_one_is_never_touched(agent):
    within = claimed(agent, timeout_seconds=600)
    overrun(within, 599)
    unlimited = claimed(agent)
    overrun(unlimited, 6 * 86400)
    pending = new(agent, timeout_seconds=1)
    before = [(row(t), attempts(t)) for t in (within, unlimited, pending)]
    assert execute(background_store.time_out()).count == 0
    assert [(row(t), attempts(t)) for t in (within, unlimited, pending)] == before


def test_a_lapsed_lease_is_left_to_the_reaper(agent):
    todo_id = claimed(agent, timeout_seconds=5)
    overrun(todo_id, 10)
    sql("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo_id,))
    assert execute(background_store.time_out()).count == 0
    assert execute(background_store.reap()).ids == (todo_id,)
    assert attempts(todo_id)[0]["outcome"] == "reaped"


def test_the_queue_default_applies_and_the_todos_own_limit_wins(world):
    agent = world.agent
    execute(queue_settings.set_timeout(world.admin, world.team.id, "default", 60))
    by_default = claimed(agent)
    own_longer = claimed(agent, timeout_seconds=3600)
    other_queue = claimed(agent, queue="other")
    for todo_id in (by_default, own_longer, other_queue):
        overrun(todo_id, 120)
    assert execute(background_store.time_out()).ids == (by_default,)
    assert attempts(by_default)[0]["error"]["message"] == "ran past its run-time limit of 60 seconds"
    own_shorter = claimed(agent, timeout_seconds=10)
    overrun(own_shorter, 30)
    assert execute(background_store.time_out()).ids == (own_shorter,)
    assert row(own_longer)["state"] == row(other_queue)["state"] == "claimed"


def test_every_claim_answers_the_attempt_s_effective_limit(world):
    """The todo's own limit, else its team's default for its queue, else none: what a worker
    stops by (claim_next, claim_batch, claim by id alike)."""
    agent = world.agent
    execute(queue_settings.set_timeout(world.admin, world.team.id, "default", 60))
    execute(queue_settings.set_timeout(None, world.foreign_team.id, "other", 90))
    own = new(agent, timeout_seconds=3600, priority=-3)
    by_default = new(agent, priority=-2)
    other_queue = new(agent, queue="other", priority=-1)
    assert execute(agent_store.claim_next(agent, queue="default")).timeout_seconds == 3600
    assert execute(agent_store.claim(agent, by_default)).timeout_seconds == 60
    (batch,) = execute(agent_store.claim_batch(agent, max=5, queue="other"))
    assert batch.todo.id == other_queue and batch.timeout_seconds is None  # another team's default
    assert row(own)["timeout_seconds"] == 3600 and row(by_default)["timeout_seconds"] is None


def test_another_teams_default_does_not_apply(world):
    execute(queue_settings.set_timeout(None, world.foreign_team.id, "default", 60))
    todo_id = claimed(world.agent)
    overrun(todo_id, 120)
    assert execute(background_store.time_out()).count == 0


def test_a_humans_claim_is_not_timed_out(world):
    todo_id = new(world.agent, timeout_seconds=5)
    from todos.core.store import human as human_store

    execute(human_store.claim(world.human, todo_id))
    overrun(todo_id, 60)
    assert execute(background_store.time_out()).count == 0


def test_the_sweep_takes_at_most_limit_rows_oldest_claim_first(agent):
    ids = [claimed(agent, timeout_seconds=5) for _ in range(3)]
    for n, todo_id in enumerate(ids):
        overrun(todo_id, 100 - n)
    assert execute(background_store.time_out(limit=2)).ids == tuple(ids[:2])
    assert execute(background_store.time_out(limit=2)).ids == (ids[2],)


# --- reports past the limit -------------------------------------------------------------------


def test_a_heartbeat_past_the_limit_is_a_conflict_and_writes_nothing(agent):
    todo_id = claimed(agent, timeout_seconds=30)
    overrun(todo_id, 31)
    factories.relayed()
    before = (row(todo_id), attempts(todo_id))
    with pytest.raises(Conflict):
        execute(agent_store.heartbeat(agent, todo_id))
    assert (row(todo_id), attempts(todo_id)) == before
    assert one("SELECT count(*) AS n FROM change_log")["n"] == 0  # nothing logged


def test_a_heartbeat_past_the_queue_default_is_a_conflict(world):
    execute(queue_settings.set_timeout(world.admin, world.team.id, "default", 30))
    todo_id = claimed(world.agent)
    execute(agent_store.heartbeat(world.agent, todo_id))  # within the limit
    overrun(todo_id, 31)
    with pytest.raises(Conflict):
        execute(agent_store.heartbeat(world.agent, todo_id))


def test_a_heartbeat_within_the_limit_or_without_one_lands(agent):
    limited = claimed(agent, timeout_seconds=30)
    overrun(limited, 29)
    unlimited = claimed(agent)
    overrun(unlimited, 86400)
    assert execute(agent_store.heartbeat(agent, limited)).state == "claimed"
    assert execute(agent_store.heartbeat(agent, unlimited)).state == "claimed"


def test_a_late_complete_lands_until_the_sweep_ends_the_attempt(agent):
    late = claimed(agent, timeout_seconds=30)
    overrun(late, 60)
    assert execute(agent_store.complete(agent, late)).state == "done"
    assert attempts(late)[0]["outcome"] == "completed"
    swept = claimed(agent, timeout_seconds=30)
    overrun(swept, 60)
    assert execute(background_store.time_out()).ids == (swept,)
    with pytest.raises(Conflict):
        execute(agent_store.complete(agent, swept))
    with pytest.raises(Conflict):
        execute(agent_store.fail(agent, swept))
    assert [a["outcome"] for a in attempts(swept)] == ["timed_out"]


# --- the sweep racing the holder --------------------------------------------------------------


def test_the_sweep_racing_a_complete_has_exactly_one_winner(agent):
    """The holder's complete and the sweep lock the same row: whichever is first changes it, the
    other's guard no longer matches (the complete answers conflict, the sweep skips the row)."""
    outcomes: list[str] = []
    ids = []
    for _ in range(25):
        todo_id = claimed(agent, timeout_seconds=30, max_attempts=3)
        overrun(todo_id, 60)
        ids.append(todo_id)

        def work(i, barrier, todo_id=todo_id):
            with db.connect() as conn:
                stmt = background_store.time_out() if i == 0 else agent_store.complete(agent, todo_id)
                barrier.wait()
                return execute(stmt, conn)

        swept, completed = run_threads(2, work)
        assert not isinstance(swept, BaseException), swept
        [a] = attempts(todo_id)
        r = row(todo_id)
        if todo_id in swept.ids:
            assert isinstance(completed, Conflict), completed
            assert (r["state"], a["outcome"], a["disposition"]) == ("failed", "timed_out", "retry_scheduled")
        else:
            assert not isinstance(completed, BaseException), completed
            assert (r["state"], a["outcome"], a["disposition"]) == ("done", "completed", "done")
        outcomes.append(a["outcome"])
    factories.relayed()
    with db.connect() as conn:
        assert conn.execute(DRIFT_SQL).fetchall() == []
    n = one(
        """SELECT count(*) FILTER (WHERE state = 'done') AS done, count(*) FILTER (WHERE state = 'failed') AS failed
           FROM todos WHERE id = ANY(%s)""",
        (ids,),
    )
    counted = one(
        """SELECT coalesce(sum(n) FILTER (WHERE state = 'done'), 0) AS done,
                  coalesce(sum(n) FILTER (WHERE state = 'retry'), 0) AS failed
           FROM todo_counts WHERE endpoint_id = %s""",
        (agent.endpoint_id,),
    )
    assert (n["done"] + n["failed"], counted["done"], counted["failed"]) == (25, n["done"], n["failed"])
    # the charts count each attempt once: completed ones as completed, timed-out ones as failed
    assert flow() == (outcomes.count("completed"), outcomes.count("timed_out"), 0)
    assert set(outcomes) <= {"completed", "timed_out"}  # the interleavings are the scheduler's; each was checked


# --- the queue default ------------------------------------------------------------------------


def test_setting_a_queue_default_is_audited_and_clearing_removes_it(world):
    changed = execute(queue_settings.set_timeout(world.admin, world.team.id, "default", 300))
    assert (changed.queue, changed.timeout_seconds, changed.previous) == ("default", 300, None)
    changed = execute(queue_settings.set_timeout(world.admin, world.team.id, "default", 600))
    assert changed.previous == 300
    assert one("SELECT timeout_seconds FROM queue_settings WHERE queue = 'default'")["timeout_seconds"] == 600
    cleared = execute(queue_settings.set_timeout(world.admin, world.team.id, "default", None))
    assert (cleared.timeout_seconds, cleared.previous) == (None, 600)
    assert sql("SELECT * FROM queue_settings") == []
    rows = [a for a in audit() if a["action"] == "queue.timeout"]
    assert [(a["queue"], a["detail"]["old"], a["detail"]["new"], a["actor"]) for a in rows] == [
        ("default", None, 300, "adam"),
        ("default", 300, 600, "adam"),
        ("default", 600, None, "adam"),
    ]


def test_the_system_may_set_a_default(world):
    changed = execute(queue_settings.set_timeout(None, world.team.id, "default", 120))
    assert changed.timeout_seconds == 120
    assert [a["actor"] for a in audit() if a["action"] == "queue.timeout"] == ["system"]


def test_only_a_team_admin_sets_a_default_and_a_foreign_team_is_not_found(world):
    for person in (world.human, world.viewer):
        with pytest.raises(Forbidden):
            execute(queue_settings.set_timeout(person, world.team.id, "default", 60))
    with pytest.raises(NotFound):
        execute(queue_settings.set_timeout(world.outsider, world.team.id, "default", 60))
    assert sql("SELECT * FROM queue_settings") == []
    assert not [a for a in audit() if a["action"] == "queue.timeout"]


# --- inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, 604801, 1.5, "60", True, [60]])
def test_a_bad_timeout_seconds_is_invalid_naming_the_field_and_nothing_is_written(agent, world, value):
    before = counts()
    with pytest.raises(Invalid) as bad:
        agent_store.create(agent, queue="default", title="t", timeout_seconds=value)
    assert bad.value.field == "timeout_seconds"
    with pytest.raises(Invalid) as bad:
        agent_store.create_batch(
            agent, [{"queue": "default", "title": "t"}, {"queue": "default", "title": "t", "timeout_seconds": value}]
        )
    assert bad.value.field == "items[1].timeout_seconds"
    with pytest.raises(Invalid) as bad:
        queue_settings.set_timeout(world.admin, world.team.id, "default", value)
    assert bad.value.field == "timeout_seconds"
    assert counts() == before and sql("SELECT * FROM queue_settings") == []


@pytest.mark.parametrize("value", [1, 604800])
def test_the_bounds_of_timeout_seconds_are_accepted(agent, value):
    assert (
        execute(agent_store.create(agent, queue="default", title="t", timeout_seconds=value)).todo.timeout_seconds
        == value
    )
    [item] = execute(agent_store.create_batch(agent, [{"queue": "default", "title": "t", "timeout_seconds": value}]))
    assert item.todo is not None and item.todo.timeout_seconds == value


@pytest.mark.parametrize("queue", ["", "-starts-with-dash", "has space", "x" * 129, None])
def test_a_bad_queue_name_for_a_default_is_invalid(world, queue):
    with pytest.raises(Invalid) as bad:
        queue_settings.set_timeout(world.admin, world.team.id, queue, 60)
    assert bad.value.field == "queue"


def test_a_bad_team_id_is_invalid(world):
    with pytest.raises(Invalid) as bad:
        queue_settings.set_timeout(world.admin, "not-a-team", "default", 60)
    assert bad.value.field == "team"


def test_the_database_refuses_a_limit_out_of_range_as_a_backstop(agent):
    todo_id = new(agent)
    with pytest.raises(Exception, match="run_time_limit_range"):
        sql("UPDATE todos SET timeout_seconds = 0 WHERE id = %s", (todo_id,))

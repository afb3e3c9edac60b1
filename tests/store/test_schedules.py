"""Periodic schedules in the store: checks that name the field, tenancy, the audit, and firing each
tick exactly once (real threads on their own connections), the missed-tick policies and a crash."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.store.helpers import audit, one, run_threads, sql
from todos.core.db import execute, pooled_connection
from todos.core.errors import Forbidden, Invalid, NotFound
from todos.core.store import schedules as schedule_store


def now() -> datetime:
    return datetime.now(UTC)


def fields(world, **overrides):
    base = {
        "name": "nightly",
        "cron": "*/5 * * * *",
        "timezone": "Europe/Paris",
        "endpoint_id": world.agent.endpoint_id,
        "queue": "default",
        "title": "Nightly report",
        "kind": "report",
        "payload": {"scope": "all"},
        "priority": 3,
        "max_attempts": 2,
        "missed": "skip",
    }
    return {**base, **overrides}


def make(world, op=None, **overrides) -> schedule_store.Schedule:
    return execute(schedule_store.create(op, world.team.id, now=now(), **fields(world, **overrides)))


def due_now(schedule_id, ago: timedelta = timedelta(seconds=1)) -> datetime:
    """Put the schedule's next tick ``ago`` in the past (the time-compressed way to reach it)."""
    return sql(
        "UPDATE schedules SET next_fire_at = date_trunc('minute', now() - %s) RETURNING next_fire_at",
        [ago],
    )[0]["next_fire_at"]


def test_a_time_that_is_no_tick_fires_nothing(world):
    """``next_fire_at`` is a lower bound: the sweep aligns it to the schedule's own ticks."""
    make(world, cron="0 3 * * *", timezone="UTC")
    due_now(None)
    assert schedule_store.fire_due() == []
    assert one("SELECT next_fire_at FROM schedules")["next_fire_at"].hour == 3


def fires(schedule_id=None) -> list[dict]:
    return (
        sql("SELECT * FROM schedule_fires ORDER BY tick")
        if schedule_id is None
        else sql("SELECT * FROM schedule_fires WHERE schedule_id = %s ORDER BY tick", [schedule_id])
    )


def test_create_computes_the_next_tick_and_audits(world):
    made = make(world, world.human)
    assert made.next_fire_at > now() and made.next_fire_at.minute % 5 == 0
    assert made.timezone == "Europe/Paris" and made.payload == {"scope": "all"}
    row = audit()[-1]
    assert row["action"] == "schedule.create" and row["actor"] == "olive" and row["note"] == "nightly"


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"cron": "61 * * * *"}, "cron", "does not parse: Bad minute"),
        ({"cron": "* * *"}, "cron", "does not parse: Wrong number of fields"),
        ({"cron": ""}, "cron", "is required"),
        ({"timezone": "Mars/Olympus"}, "timezone", "unknown time zone 'Mars/Olympus'"),
        ({"name": "  "}, "name", "is required"),
        ({"title": ""}, "title", "must not be empty"),
        ({"queue": "bad queue"}, "queue", "must be 1 to 128"),
        ({"queue": "elsewhere"}, "queue", "not in the owner endpoint's scope"),
        ({"missed": "always"}, "missed", "skip or catch_up"),
        ({"max_attempts": 0}, "max_attempts", ""),
        ({"endpoint_id": "nope"}, "endpoint", "must be the endpoint's id"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(world, overrides, field, words):
    with pytest.raises(Invalid) as caught:
        make(world, world.human, **overrides)
    assert caught.value.message.startswith(f"{field}:") and words in caught.value.message
    assert one("SELECT count(*) AS n FROM schedules")["n"] == 0
    assert one("SELECT count(*) AS n FROM audit_log WHERE action LIKE 'schedule.%%'")["n"] == 0


def test_owner_endpoint_must_be_the_teams(world):
    with pytest.raises(Invalid, match="endpoint: must be an active endpoint of the schedule's team"):
        make(world, world.human, endpoint_id=world.foreign_agent.endpoint_id)
    make(world, world.human)
    with pytest.raises(Invalid, match="name: the team already has a schedule with this name"):
        make(world, world.human)
    assert one("SELECT count(*) AS n FROM schedules")["n"] == 1


def test_tenancy_viewer_is_read_only_outsider_sees_nothing(world):
    with pytest.raises(Forbidden):
        make(world, world.viewer)
    with pytest.raises(NotFound):
        make(world, world.outsider)
    made = make(world, world.human)
    for stmt in (
        schedule_store.fire_now(world.outsider, made.id),
        schedule_store.delete(world.outsider, made.id),
        schedule_store.set_paused(world.outsider, made.id, True, now=now()),
        schedule_store.update(world.outsider, made.id, now=now(), **fields(world, name="x")),
    ):
        with pytest.raises(NotFound):
            execute(stmt)
    for stmt in (schedule_store.fire_now(world.viewer, made.id), schedule_store.delete(world.viewer, made.id)):
        with pytest.raises(Forbidden):
            execute(stmt)
    assert fires() == [] and one("SELECT count(*) AS n FROM schedules")["n"] == 1


def test_a_due_tick_fires_once_with_its_template_and_key(world):
    made = make(world, cron="* * * * *")
    tick = due_now(made.id)
    fired = schedule_store.fire_due()
    assert [(f.schedule_id, f.tick) for f in fired] == [(made.id, tick)]
    todo = one("SELECT * FROM todos WHERE id = %s", [fired[0].todo_id])
    assert (todo["title"], todo["kind"], todo["payload"], todo["priority"], todo["max_attempts"]) == (
        "Nightly report",
        "report",
        {"scope": "all"},
        3,
        2,
    )
    assert todo["state"] == "pending" and todo["source"] == "schedule" and todo["queue"] == "default"
    assert todo["idempotency_key"] == f"schedule:{made.id}:{tick.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}"
    assert schedule_store.fire_due() == []  # moved on: the next tick is in the future
    after = one("SELECT next_fire_at FROM schedules")["next_fire_at"]
    assert after > now()


def test_concurrent_sweeps_fire_each_tick_once(world):
    """Eight threads, each on its own connection, sweep together again and again: 60 due schedules
    fire 60 todos, one per (schedule, tick)."""
    for i in range(60):
        make(world, name=f"s{i}", cron="* * * * *")
    due_now(None)

    def work(i, barrier):
        barrier.wait()
        got = []
        for _ in range(5):
            got.extend(schedule_store.fire_due(limit=7))
        return got

    outcomes = run_threads(8, work)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    total = [f for o in outcomes for f in o]
    assert len(total) == 60 and len({(f.schedule_id, f.tick) for f in total}) == 60
    assert one("SELECT count(*) AS n FROM schedule_fires")["n"] == 60
    assert one("SELECT count(*) AS n FROM todos WHERE source = 'schedule'")["n"] == 60
    assert one("SELECT count(*) AS n FROM schedules WHERE next_fire_at <= now()")["n"] == 0


def test_missed_ticks_skip_fires_only_the_current_one(world):
    made = make(world, cron="* * * * *", missed="skip")
    due_now(made.id, timedelta(hours=1))
    fired = schedule_store.fire_due()
    assert [f.how for f in fired] == ["tick"]
    assert now() - fired[0].tick < timedelta(seconds=61)


def test_missed_ticks_catch_up_fires_once_for_them(world):
    made = make(world, cron="* * * * *", missed="catch_up")
    due_now(made.id, timedelta(hours=1))
    fired = schedule_store.fire_due()
    assert [f.how for f in sorted(fired, key=lambda f: f.tick)] == ["catch_up", "tick"]
    assert fires(made.id)[0]["missed"] >= 58


def test_a_crash_before_commit_fires_nothing_and_the_next_sweep_fires_once(world):
    made = make(world, cron="* * * * *")
    tick = due_now(made.id)
    with pytest.raises(RuntimeError), pooled_connection() as conn, conn.transaction():
        locked = conn.execute(schedule_store.lock_due().sql, {"limit": 10}).fetchall()
        stmt = schedule_store.fire([made.id], [tick + timedelta(minutes=1)], [(made.id, tick, "tick", 0)])
        conn.execute(stmt.sql, stmt.params)
        assert len(locked) == 1
        raise RuntimeError("the process dies before COMMIT")
    assert fires() == [] and one("SELECT count(*) AS n FROM todos")["n"] == 0
    assert [f.tick for f in schedule_store.fire_due()] == [tick]
    # Even a replay of the committed tick (a stale plan) is refused by the fires' primary key.
    replay = execute(schedule_store.fire([made.id], [tick + timedelta(minutes=1)], [(made.id, tick, "tick", 0)]))
    assert replay == [] and len(fires()) == 1


def test_pause_stops_firing_and_resume_waits_for_the_next_tick(world):
    made = make(world, cron="* * * * *")
    paused = execute(schedule_store.set_paused(world.human, made.id, True, now=now()))
    assert paused.paused
    due_now(made.id, timedelta(minutes=10))
    assert schedule_store.fire_due() == []
    resumed = execute(schedule_store.set_paused(world.human, made.id, False, now=now()))
    assert not resumed.paused and resumed.next_fire_at > now() - timedelta(seconds=5)
    # The sweep aligns the resume time to the next tick and fires nothing of the paused hours.
    assert schedule_store.fire_due() == []
    aligned = one("SELECT next_fire_at FROM schedules")["next_fire_at"]
    assert aligned > now() and aligned.second == 0 and aligned.microsecond == 0
    assert [r["action"] for r in audit()][-2:] == ["schedule.pause", "schedule.resume"]


def test_fire_now_creates_a_todo_and_audits_it(world):
    made = make(world)
    fired = execute(schedule_store.fire_now(world.human, made.id))
    assert fired.how == "manual" and fired.todo_id
    assert audit()[-1]["action"] == "schedule.fire" and audit()[-1]["todo_id"] == fired.todo_id
    assert one("SELECT next_fire_at FROM schedules")["next_fire_at"] == made.next_fire_at


def test_edit_audits_old_and_new_and_bad_edit_writes_nothing(world):
    made = make(world)
    edited = execute(
        schedule_store.update(world.human, made.id, now=now(), **fields(world, cron="0 9 * * *", priority=7))
    )
    assert edited.cron == "0 9 * * *" and edited.next_fire_at.astimezone(edited_zone()).hour == 9
    detail = audit()[-1]["detail"]
    assert detail["cron"] == {"old": "*/5 * * * *", "new": "0 9 * * *"} and detail["priority"]["new"] == 7
    with pytest.raises(Invalid, match="cron: does not parse"):
        execute(schedule_store.update(world.human, made.id, now=now(), **fields(world, cron="0 25 * * *")))
    assert one("SELECT cron FROM schedules")["cron"] == "0 9 * * *"


def edited_zone():
    from zoneinfo import ZoneInfo

    return ZoneInfo("Europe/Paris")


def test_delete_keeps_the_todos(world):
    made = make(world)
    fired = execute(schedule_store.fire_now(None, made.id))
    assert execute(schedule_store.delete(world.admin, made.id)) == "nightly"
    assert sql("SELECT * FROM schedules") == [] and one("SELECT id FROM todos")["id"] == fired.todo_id
    with pytest.raises(NotFound):
        execute(schedule_store.delete(world.admin, made.id))


@pytest.mark.parametrize("labels", [[f"l{n}" for n in range(17)], ["gpu", None]])
def test_the_database_refuses_requirements_the_store_would(world, labels):
    """The CHECK is the backstop behind inputs.capability_labels, as on todos.requires."""
    import psycopg

    made = make(world, requires=["gpu"])
    assert made.requires == ["gpu"]
    with pytest.raises(psycopg.errors.CheckViolation), pooled_connection() as conn:
        conn.execute("UPDATE schedules SET requires = %s WHERE id = %s", (labels, made.id))
    assert one("SELECT requires FROM schedules")["requires"] == ["gpu"]

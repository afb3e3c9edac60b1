"""The schedule writes under races, on real threads with their own connections: two creates (or
renames) to one name, and a manual fire against a delete. Each answers success or a clean store
error, never a database error, and a fire that created its todo says so."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.store.helpers import one, run_threads, sql
from tests.store.test_schedules import fields, make
from todos.core.db import execute
from todos.core.errors import Invalid, NotFound, StoreError
from todos.core.store import schedules as schedule_store

ROUNDS = 25


def now() -> datetime:
    return datetime.now(UTC)


def outcome_kinds(outcomes: list) -> list[str]:
    """Each thread's outcome: ``ok``, the store error's code and field, or the unexpected error."""
    kinds = []
    for outcome in outcomes:
        if isinstance(outcome, Invalid):
            kinds.append(f"invalid:{outcome.field}:{outcome.problem}")
        elif isinstance(outcome, StoreError):
            kinds.append(outcome.code)
        elif isinstance(outcome, BaseException):
            raise AssertionError(f"a race ended in {outcome!r}") from outcome
        else:
            kinds.append("ok")
    return sorted(kinds)


NAME_TAKEN = "invalid:name:the team already has a schedule with this name"


def test_two_creates_with_one_name_at_once_make_one_and_refuse_the_other(world):
    for n in range(ROUNDS):
        name = f"race-{n}"

        def work(i, barrier, name=name):
            barrier.wait()
            return execute(schedule_store.create(world.human, world.team.id, now=now(), **fields(world, name=name)))

        assert outcome_kinds(run_threads(2, work)) == [NAME_TAKEN, "ok"], name
        assert one("SELECT count(*) AS n FROM schedules WHERE name = %s", [name])["n"] == 1
    assert one("SELECT count(*) AS n FROM audit_log WHERE action = 'schedule.create'")["n"] == ROUNDS


def test_two_renames_to_one_name_at_once_rename_one_and_refuse_the_other(world):
    for n in range(ROUNDS):
        first, second = make(world, name=f"a-{n}"), make(world, name=f"b-{n}")
        target = f"renamed-{n}"

        def work(i, barrier, ids=(first.id, second.id), target=target):
            barrier.wait()
            return execute(schedule_store.update(world.human, ids[i], now=now(), **fields(world, name=target)))

        assert outcome_kinds(run_threads(2, work)) == [NAME_TAKEN, "ok"], target
        assert one("SELECT count(*) AS n FROM schedules WHERE name = %s", [target])["n"] == 1


def test_a_create_racing_a_rename_to_its_name_makes_one_of_them(world):
    for n in range(ROUNDS):
        other = make(world, name=f"other-{n}")
        target = f"wanted-{n}"

        def work(i, barrier, other_id=other.id, target=target):
            barrier.wait()
            wanted = fields(world, name=target)
            if i == 0:
                return execute(schedule_store.create(world.human, world.team.id, now=now(), **wanted))
            return execute(schedule_store.update(world.human, other_id, now=now(), **wanted))

        assert outcome_kinds(run_threads(2, work)) == [NAME_TAKEN, "ok"], target


def test_a_manual_fire_racing_a_delete_fires_or_finds_nothing(world):
    fired_todos = 0
    for n in range(ROUNDS):
        made = make(world, world.human, name=f"fire-{n}")

        def work(i, barrier, schedule_id=made.id):
            barrier.wait()
            if i == 0:
                return execute(schedule_store.fire_now(world.human, schedule_id))
            return execute(schedule_store.delete(world.human, schedule_id))

        fire, deleted = run_threads(2, work)
        assert deleted == f"fire-{n}", deleted
        if isinstance(fire, NotFound):
            assert fire.message == "no such schedule"
        else:
            assert not isinstance(fire, BaseException), repr(fire)
            assert fire.todo_id is not None and fire.schedule is not None and fire.schedule.id == made.id
            fired_todos += 1
        assert one("SELECT count(*) AS n FROM schedules WHERE id = %s", [made.id])["n"] == 0
    # every fire that answered with a todo made it, and no other was made
    assert one("SELECT count(*) AS n FROM todos WHERE source = 'schedule'")["n"] == fired_todos


def test_a_fire_after_a_committed_delete_is_not_found_and_writes_nothing(world):
    made = make(world, world.human)
    execute(schedule_store.delete(world.human, made.id))
    try:
        execute(schedule_store.fire_now(world.human, made.id))
    except NotFound as exc:
        assert exc.message == "no such schedule"
    else:
        raise AssertionError("fired a deleted schedule")
    assert sql("SELECT id FROM todos") == []

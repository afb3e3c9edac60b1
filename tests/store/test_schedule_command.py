"""``manage.py schedule list|create|edit|pause|resume|fire|delete`` from a shell."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from tests.store.helpers import audit, one, sql


def run(*args) -> str:
    out = io.StringIO()
    call_command("schedule", *args, stdout=out)
    return out.getvalue()


CREATE = ("create", "team-a", "--name", "hourly", "--cron", "0 * * * *", "--timezone", "Asia/Tokyo")
TARGET = ("--endpoint", "worker", "--queue", "default", "--title", "Sync", "--payload", '{"a": 1}')


def test_create_list_pause_resume_fire_delete(world):
    assert run("list") == "no schedules\n"
    assert run(*CREATE, *TARGET).startswith("created ")
    sid = one("SELECT id FROM schedules")["id"]
    listed = run("list", "team-a")
    assert f"{sid}\tteam-a\thourly\t0 * * * * (Asia/Tokyo)\tworker/default\tnext " in listed
    assert run("pause", str(sid)) == "paused hourly\n" and "paused" in run("list")
    assert run("resume", str(sid)).startswith("resumed hourly")
    fired = run("fire", str(sid))
    todo = one("SELECT * FROM todos")
    assert fired == f"fired: todo {todo['id']}\n" and todo["payload"] == {"a": 1}
    assert run("delete", str(sid)) == "deleted hourly\n"
    assert [r["action"] for r in audit() if r["action"].startswith("schedule.")] == [
        "schedule.create",
        "schedule.pause",
        "schedule.resume",
        "schedule.fire",
        "schedule.delete",
    ]
    assert {r["actor"] for r in audit() if r["action"].startswith("schedule.")} == {"system"}


def test_create_with_required_capabilities(world):
    run(*CREATE, *TARGET, "--requires", "gpu", "--requires", "region:eu")
    sid = one("SELECT id, requires FROM schedules")
    assert sid["requires"] == ["gpu", "region:eu"]
    run("fire", str(sid["id"]))
    assert one("SELECT requires FROM todos")["requires"] == ["gpu", "region:eu"]
    with pytest.raises(CommandError, match=r"requires\[0\]: must be letters"):
        run(*CREATE[:3], "other", *CREATE[4:], *TARGET, "--requires", "bad!label")
    assert len(sql("SELECT * FROM schedules")) == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("--cron", "0 * * * * * * *"), "cron: does not parse"),
        (("--cron", "0 24 * * *"), "cron: does not parse: Bad hour"),
        (("--timezone", "Nowhere/Land"), "timezone: unknown time zone 'Nowhere/Land'"),
        (("--endpoint", "foreign"), "endpoint: must be an active endpoint of the schedule's team"),
        (("--endpoint", "ghost"), "endpoint: no endpoint with slug 'ghost'"),
        (("--queue", "third-party"), "queue: is not in the owner endpoint's scope"),
        (("--payload", "{nope"), "payload: not JSON"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(world, change, words):
    args = list(CREATE + TARGET)
    flag, value = change
    if flag in args:
        args[args.index(flag) + 1] = value
    with pytest.raises(CommandError, match=words.replace("(", r"\(").replace("*", r"\*")):
        run(*args)
    assert sql("SELECT * FROM schedules") == []


def test_unknown_team_and_schedule(world):
    with pytest.raises(CommandError, match="team: no team with slug 'nope'"):
        run("list", "nope")
    with pytest.raises(CommandError, match="no such schedule"):
        run("fire", "00000000-0000-4000-8000-000000000000")
    with pytest.raises(CommandError, match="schedule: must be the schedule's id"):
        run("pause", "not-an-id")


def test_edit_changes_the_options_given_and_keeps_the_rest(world):
    run(*CREATE, *TARGET, "--priority", "4", "--requires", "gpu")
    sid = str(one("SELECT id FROM schedules")["id"])
    before = one("SELECT * FROM schedules")
    out = run("edit", sid, "--cron", "15 9 * * *", "--title", "Sync at nine", "--endpoint", "sibling")
    assert out.startswith("edited hourly (cron, endpoint_id, title); next fire ")
    after = one("SELECT * FROM schedules")
    assert (after["cron"], after["title"]) == ("15 9 * * *", "Sync at nine")
    assert after["endpoint_id"] == world.sibling.endpoint_id
    kept = ("name", "timezone", "queue", "kind", "payload", "priority", "max_attempts", "requires", "missed", "paused")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert after["next_fire_at"] != before["next_fire_at"]
    (edit,) = [r for r in audit() if r["action"] == "schedule.edit"]
    assert edit["actor"] == "system" and edit["detail"]["title"] == {"old": "Sync", "new": "Sync at nine"}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--cron", "0 24 * * *"), "cron: does not parse: Bad hour"),
        (("--endpoint", "foreign"), "endpoint: must be an active endpoint of the schedule's team"),
        (("--queue", "third"), "queue: is not in the owner endpoint's scope"),  # sibling's scope is default only
        (("--payload", "{nope"), "payload: not JSON"),
        ((), "nothing to change"),
    ],
)
def test_a_bad_edit_is_refused_and_changes_nothing(world, args, words):
    run(*CREATE, *TARGET)
    sid = str(one("SELECT id FROM schedules")["id"])
    if "--queue" in args:
        args = (*args, "--endpoint", "sibling")
    before = sql("SELECT * FROM schedules")
    with pytest.raises(CommandError, match=words):
        run("edit", sid, *args)
    assert sql("SELECT * FROM schedules") == before
    assert not [r for r in audit() if r["action"] == "schedule.edit"]


def test_edit_of_an_unknown_or_malformed_schedule(world):
    with pytest.raises(CommandError, match="no such schedule"):
        run("edit", "00000000-0000-4000-8000-000000000000", "--title", "x")
    with pytest.raises(CommandError, match="schedule: must be the schedule's id"):
        run("edit", "not-an-id", "--title", "x")


def test_edit_knows_every_field_of_a_definition():
    """``edit`` keeps what it is not given by reading DEFINITION_FIELDS: a field the template gains
    must be named there, or an edit would reset it."""
    import inspect

    from todos.core.store import schedules

    named = set(inspect.signature(schedules.template).parameters) - {"endpoint_id", "now"}
    assert named == set(schedules.DEFINITION_FIELDS)

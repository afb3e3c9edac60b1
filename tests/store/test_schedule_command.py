"""``manage.py schedule list|create|pause|resume|fire|delete`` from a shell."""

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

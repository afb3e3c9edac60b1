"""``manage.py queue_timeout list|set|clear``: a team's default run-time limits from a shell."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from tests.store.helpers import audit, sql


def run(*args) -> str:
    out = io.StringIO()
    call_command("queue_timeout", *args, stdout=out)
    return out.getvalue()


def test_set_list_and_clear(world):
    assert run("list", "team-a") == "no queue has a default run-time limit\n"
    assert run("set", "team-a", "default", "300") == "default: run-time limit none -> 300 s\n"
    assert run("list", "team-a") == "default\t300 s\n"
    assert run("set", "team-a", "default", "60") == "default: run-time limit 300 s -> 60 s\n"
    assert run("clear", "team-a", "default") == "default: run-time limit 60 s -> none\n"
    assert run("list", "team-a") == "no queue has a default run-time limit\n"
    rows = [a for a in audit() if a["action"] == "queue.timeout"]
    assert [(a["actor"], a["detail"]["new"]) for a in rows] == [("system", 300), ("system", 60), ("system", None)]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("set", "nope", "default", "60"), "no team with slug 'nope'"),
        (("set", "team-a", "default", "0"), "timeout_seconds: must be from 1 to 604800"),
        (("set", "team-a", "default", "604801"), "timeout_seconds: must be from 1 to 604800"),
        (("set", "team-a", "default", "soon"), "timeout_seconds: must be an integer"),
        (("set", "team-a", "has space", "60"), "queue: must be 1 to 128 characters"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(world, args, words):
    with pytest.raises(CommandError, match=words):
        run(*args)
    assert sql("SELECT count(*) AS n FROM queue_settings")[0]["n"] == 0
    assert not [a for a in audit() if a["action"] == "queue.timeout"]

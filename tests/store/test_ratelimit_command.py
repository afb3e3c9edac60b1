"""``manage.py ratelimit list|set|remove --team``: a team's rate limits from a shell."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from tests.store.helpers import audit, sql
from todos.core.db import execute
from todos.core.store import agent as agent_store


def run(*args) -> str:
    out = io.StringIO()
    call_command("ratelimit", *args, stdout=out)
    return out.getvalue()


def test_set_list_and_remove(world, agent):
    assert "every rate key is unlimited" in run("list", "--team", "team-a")
    assert run("set", "--team", "team-a", "crawl", "60", "minute") == "crawl: limit none -> 60 per minute\n"
    assert audit()[-1]["actor"] == "system" and audit()[-1]["action"] == "rate.limit"
    assert run("list", "--team", "team-a") == "crawl\t60 per minute\n"
    execute(agent_store.create(agent, queue="default", title="t", rate_key="once"))
    run("set", "--team", "team-a", "once", "1", "hour")
    execute(agent_store.claim_next(agent))
    assert "once\t1 per hour  (throttled until" in run("list", "--team", "team-a")
    assert run("remove", "--team", "team-a", "crawl") == "crawl: limit 60 per minute removed (unlimited now)\n"
    assert audit()[-1]["action"] == "rate.remove"
    assert [r["key"] for r in sql("SELECT key FROM rate_limits")] == ["once"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("set", "--team", "nope", "k", "1", "second"), "no team with slug 'nope'"),
        (("set", "--team", "team-a", "k", "0", "second"), "limit: must be from 1 to 10000"),
        (("set", "--team", "team-a", "k", "10001", "second"), "limit: must be from 1 to 10000"),
        (("set", "--team", "team-a", "k", "two", "second"), "limit: must be a whole number"),
        (("set", "--team", "team-a", "k", "5", "day"), "interval: must be one of second, minute, hour"),
        (("set", "--team", "team-a", "", "1", "second"), "key: must not be empty"),
        (("set", "--team", "team-a", "k" * 201, "1", "second"), "key: must be at most 200 characters"),
        (("remove", "--team", "team-a", "k"), "no rate limit for key 'k'"),
    ],
)
def test_refusals_name_the_problem_and_write_nothing(world, args, words):
    with pytest.raises(CommandError, match=words):
        run(*args)
    assert sql("SELECT * FROM rate_limits") == []

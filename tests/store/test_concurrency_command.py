"""``manage.py concurrency list|set``: a team's key limits from a shell."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from tests.store.helpers import audit, sql
from todos.core.db import execute
from todos.core.store import agent as agent_store


def run(*args) -> str:
    out = io.StringIO()
    call_command("concurrency", *args, stdout=out)
    return out.getvalue()


def test_set_then_list(world, agent):
    assert "every key has limit 1" in run("list", "team-a")
    assert run("set", "team-a", "deploy:prod", "2") == "deploy:prod: limit 1 (default) -> 2 (0 claimed now)\n"
    assert audit()[-1]["actor"] == "system" and audit()[-1]["action"] == "concurrency.limit"
    execute(agent_store.create(agent, queue="default", title="t", concurrency_key="deploy:prod"))
    execute(agent_store.claim_next(agent))
    assert run("list", "team-a") == "deploy:prod\tlimit 2\tclaimed 1\n"
    assert run("set", "team-a", "deploy:prod", "1").startswith("deploy:prod: limit 2 -> 1")
    assert "(at its limit)" in run("list", "team-a")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("set", "nope", "k", "1"), "no team with slug 'nope'"),
        (("set", "team-a", "k", "0"), "limit: must be from 1 to 10000"),
        (("set", "team-a", "k", "two"), "limit: must be a whole number"),
        (("set", "team-a", "", "1"), "key: must not be empty"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(world, args, words):
    with pytest.raises(CommandError, match=words):
        run(*args)
    assert sql("SELECT count(*) AS n FROM concurrency_keys")[0]["n"] == 0

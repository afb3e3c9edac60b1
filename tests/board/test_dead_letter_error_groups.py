"""Dead letters group by their last attempt's error object, ``type: first line of message``, when
there is one: the same exception groups whatever its traceback or summary; without an error object
the reason is the summary (else ``result.error``), as before."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.support.board import make
from todos.core.db import execute
from todos.core.filters import TodoFilter
from todos.core.selectors import dead_letters, todo_list
from todos.core.selectors.access import viewer_for
from todos.core.store import agent as agent_store

pytestmark = pytest.mark.usefixtures("store_db")


def dead(world, title: str, **report) -> str:
    todo = execute(agent_store.create(world.agent, queue="default", title=title, max_attempts=1)).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.fail(world.agent, todo.id, **report))
    return todo.id


def test_identical_errors_group_whatever_their_tracebacks_and_summaries(world):
    for n in range(3):
        dead(
            world,
            f"Sync {n}",
            summary=f"run {n} went wrong in its own words",
            error={"type": "app.SyncError", "message": "remote refused\ndetails " + "x" * n, "traceback": f"frame {n}"},
        )
    dead(world, "Other", summary="run went wrong", error={"type": "KeyError", "message": "'user'"})
    dead(world, "Type only", error={"type": "MemoryError"})
    dead(world, "Message only", error={"message": "disk full\n/dev/sda1"})
    dead(world, "No error object", summary="timeout after 30s")
    dead(world, "Nothing at all", result={"error": "ValueError"})

    groups, capped = dead_letters.groups(viewer_for(world.alice_user), TodoFilter(state="dead"))
    assert not capped
    assert {g.fingerprint: g.count for g in groups} == {
        "app.syncerror: remote refused": 3,
        "keyerror: 'user'": 1,
        "memoryerror": 1,
        "disk full": 1,
        "timeout after #s": 1,
        "valueerror": 1,
    }
    example = next(g for g in groups if g.count == 3)
    assert example.example_reason == "app.SyncError: remote refused"


def test_the_dead_letter_list_shows_the_error_as_the_reason(world, alice_client):
    dead(world, "Broken sync", summary="a summary", error={"type": "app.SyncError", "message": "remote refused\n…"})
    make(world, "dead", title="Plain")
    page = alice_client.get(reverse("todo_list") + "?state=dead").content.decode()
    assert "app.SyncError: remote refused" in page


def test_failed_with_lists_exactly_the_todos_each_group_counts(world):
    """The filter reads the group stored by the failing statement; the page computes it."""
    for n in range(3):
        dead(world, f"Boom {n}", error={"type": "Boom", "message": f"at {n}"})
    dead(world, "Other", summary="something else")
    viewer = viewer_for(world.alice_user)
    groups, _ = dead_letters.groups(viewer, TodoFilter(state="dead"))
    assert {g.fingerprint: g.count for g in groups} == {"boom: at #": 3, "something else": 1}
    for group in groups:
        members = set(next(dead_letters.group_ids(viewer, TodoFilter(state="dead"), group.fingerprint)))
        for state in ("all", "dead"):
            page = todo_list.list_page(viewer, TodoFilter(state=state, failed_with=group.fingerprint))
            assert {r.id for r in page.rows} == members

"""Dependencies over HTTP: create_for and create_batch take after, after_items and
on_parent_failure; the todo shows blocked and parents_left; bad values name the field."""

from __future__ import annotations

from todos.core.db import pool


def dependency_rows() -> int:
    with pool().connection() as conn:
        return conn.execute("SELECT count(*) AS n FROM todo_dependencies").fetchone()["n"]


def test_a_child_is_blocked_until_its_parent_is_done(api, tenancy):
    token = tenancy.worker_token
    parent = api.ok(token, "create_for", {"queue": "default", "title": "p"}, status=201)["todo"]
    child = api.ok(token, "create_for", {"queue": "default", "title": "c", "after": [parent["id"]]}, status=201)
    child = child["todo"]
    assert child["blocked"] is True and child["scheduled"] is False and child["next_retry_at"] is None
    assert child["parents_left"] == 1 and child["on_parent_failure"] == "cancel"
    claimed = api.ok(token, "claim_next", {})
    assert claimed["todo"]["id"] == parent["id"]
    api.ok(token, "complete", {"id": parent["id"]})
    got = api.ok(token, "get_todo", {"id": child["id"]})["todo"]
    assert got["blocked"] is False and got["parents_left"] == 0
    assert api.ok(token, "claim_next", {})["todo"]["id"] == child["id"]


def test_a_batch_graph_in_one_call(api, tenancy):
    items = [
        {"queue": "default", "title": "plan"},
        {"queue": "default", "title": "a", "after_items": [0]},
        {"queue": "default", "title": "merge", "after_items": [0, 1], "on_parent_failure": "run"},
    ]
    results = api.ok(tenancy.worker_token, "create_batch", {"items": items})["results"]
    assert [r["todo"]["parents_left"] for r in results] == [0, 1, 2]
    assert results[2]["todo"]["on_parent_failure"] == "run"


def test_bad_dependencies_are_refused_naming_the_field_and_write_nothing(api, tenancy):
    token = tenancy.worker_token
    cases = [
        ("create_for", {"queue": "default", "title": "t", "after": ["td_missing"]}, "after[0]"),
        ("create_for", {"queue": "default", "title": "t", "on_parent_failure": "maybe"}, "on_parent_failure"),
        ("create_for", {"queue": "default", "title": "t", "after": [f"td_{n}" for n in range(101)]}, "after"),
        ("create_batch", {"items": [{"queue": "default", "title": "t", "after_items": [0]}]}, "after_items"),
    ]
    for verb, body, field in cases:
        message = api.error(token, verb, body, "invalid")
        assert field in message, (verb, body, message)
    assert dependency_rows() == 0


def test_get_todo_answers_its_parents_ids_and_how_many_it_still_waits_for(api, tenancy):
    token = tenancy.worker_token
    a = api.ok(token, "create_for", {"queue": "default", "title": "a"}, status=201)["todo"]
    b = api.ok(token, "create_for", {"queue": "default", "title": "b"}, status=201)["todo"]
    child = api.ok(token, "create_for", {"queue": "default", "title": "c", "after": [b["id"], a["id"]]}, status=201)
    got = api.ok(token, "get_todo", {"id": child["todo"]["id"]})
    assert got["after"] == sorted([a["id"], b["id"]]) and got["parents_left"] == 2
    api.ok(token, "claim", {"id": a["id"]})
    api.ok(token, "complete", {"id": a["id"]})
    got = api.ok(token, "get_todo", {"id": child["todo"]["id"]})
    assert got["after"] == sorted([a["id"], b["id"]]) and got["parents_left"] == 1
    lone = api.ok(token, "get_todo", {"id": a["id"]})
    assert lone["after"] == [] and lone["parents_left"] == 0

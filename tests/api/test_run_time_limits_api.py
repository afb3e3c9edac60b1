"""Run-time limits over HTTP: create_for and create_batch take timeout_seconds, the todo shows it,
bad values are refused naming the field, a heartbeat past the limit is a conflict, and the
attempt the sweep ended reads timed_out."""

from __future__ import annotations

import pytest

from todos.core.db import execute, pool
from todos.core.store import background


def todo_count() -> int:
    with pool().connection() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def overrun(todo_id: str, seconds: int) -> None:
    """Setup only: pretend the todo's open attempt began ``seconds`` ago."""
    with pool().connection() as conn:
        conn.execute(
            "UPDATE todos SET claimed_at = claimed_at - make_interval(secs => %s) WHERE id = %s", (seconds, todo_id)
        )


def test_a_todo_shows_its_limit_and_a_heartbeat_past_it_is_a_conflict(api, tenancy):
    token = tenancy.worker_token
    todo = api.ok(token, "create_for", {"queue": "default", "title": "t", "timeout_seconds": 60}, status=201)["todo"]
    assert todo["timeout_seconds"] == 60
    plain = api.ok(token, "create_for", {"queue": "default", "title": "u"}, status=201)["todo"]
    assert plain["timeout_seconds"] is None
    claimed = api.ok(token, "claim", {"id": todo["id"]})
    assert claimed["todo"]["timeout_seconds"] == 60
    api.ok(token, "heartbeat", {"id": todo["id"]})
    overrun(todo["id"], 61)
    message = api.error(token, "heartbeat", {"id": todo["id"]}, "conflict")
    assert todo["id"] in message
    assert execute(background.time_out()).ids == (todo["id"],)
    got = api.ok(token, "get_todo", {"id": todo["id"]})
    assert got["todo"]["state"] == "failed" and got["todo"]["next_retry_at"] is not None
    [attempt] = got["attempts"]
    assert (attempt["outcome"], attempt["disposition"], attempt["died"]) == ("timed_out", "retry_scheduled", False)
    assert attempt["error"]["type"] == "timed_out"
    api.error(token, "complete", {"id": todo["id"]}, "conflict")


def test_create_batch_takes_a_limit_per_item(api, tenancy):
    items = [{"queue": "default", "title": "a", "timeout_seconds": 5}, {"queue": "default", "title": "b"}]
    results = api.ok(tenancy.worker_token, "create_batch", {"items": items})["results"]
    assert [r["todo"]["timeout_seconds"] for r in results] == [5, None]


@pytest.mark.parametrize("value", [0, 604801, 1.5, "60", True])
def test_a_bad_timeout_seconds_is_refused_naming_the_field(api, tenancy, value):
    body = {"queue": "default", "title": "t", "timeout_seconds": value}
    assert "timeout_seconds" in api.error(tenancy.worker_token, "create_for", body, "invalid")
    batch = {
        "items": [{"queue": "default", "title": "t"}, {"queue": "default", "title": "t", "timeout_seconds": value}]
    }
    assert "items[1].timeout_seconds" in api.error(tenancy.worker_token, "create_batch", batch, "invalid")
    assert todo_count() == 0


def test_every_claim_answers_the_effective_limit_the_queue_default_included(api, tenancy):
    from todos.core.store import queue_settings

    token = tenancy.worker_token
    execute(queue_settings.set_timeout(None, tenancy.team.id, "default", 120))
    own = api.ok(
        token, "create_for", {"queue": "default", "title": "own", "timeout_seconds": 30, "priority": -1}, status=201
    )
    api.ok(token, "create_for", {"queue": "default", "title": "default"}, status=201)
    api.ok(token, "create_for", {"queue": "other", "title": "none"}, status=201)
    first = api.ok(token, "claim_next", {"queue": "default"})
    assert first["todo"]["id"] == own["todo"]["id"] and first["timeout_seconds"] == 30
    second = api.ok(token, "claim_next", {"queue": "default"})
    assert second["timeout_seconds"] == 120 and second["todo"]["timeout_seconds"] is None
    [third] = api.ok(token, "claim_batch", {"max": 5})["todos"]
    assert third["timeout_seconds"] is None

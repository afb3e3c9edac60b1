"""Run later and concurrency keys over HTTP: create_for takes run_at or delay_seconds
and concurrency_key; bad values are refused naming the field; the todo shows them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from todos.core.db import pool


def later(seconds: int) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def todo_count() -> int:
    with pool().connection() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def test_a_scheduled_todo_waits_and_shows_its_time(api, tenancy):
    out = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "later", "run_at": later(600)}, status=201
    )
    todo = out["todo"]
    assert todo["state"] == "pending" and todo["scheduled"] is True and todo["next_retry_at"]
    assert api.ok(tenancy.worker_token, "claim_next", {})["empty"] is True
    got = api.ok(tenancy.worker_token, "get_todo", {"id": todo["id"]})["todo"]
    assert got["scheduled"] is True
    delayed = api.ok(
        tenancy.worker_token, "create_for", {"queue": "default", "title": "d", "delay_seconds": 30}, status=201
    )
    assert delayed["todo"]["scheduled"] is True


def test_a_keyed_todo_shows_its_key_and_the_limit_holds(api, tenancy):
    body = {"queue": "default", "title": "deploy", "concurrency_key": "deploy:prod"}
    first = api.ok(tenancy.worker_token, "create_for", body, status=201)["todo"]
    api.ok(tenancy.worker_token, "create_for", body, status=201)
    assert first["concurrency_key"] == "deploy:prod"
    claimed = api.ok(tenancy.worker_token, "claim_next", {})
    assert claimed["todo"]["id"] == first["id"] and claimed["todo"]["concurrency_key"] == "deploy:prod"
    assert api.ok(tenancy.worker_token, "claim_next", {})["empty"] is True


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"run_at": "next tuesday"}, "run_at"),
        ({"run_at": "2020-01-01T00:00:00Z"}, "run_at"),
        ({"run_at": "2999-01-01T00:00:00Z"}, "run_at"),
        ({"delay_seconds": -5}, "delay_seconds"),
        ({"delay_seconds": 40_000_000}, "delay_seconds"),
        ({"delay_seconds": 5, "run_at": "2999-01-01T00:00:00Z"}, "run_at"),
        ({"concurrency_key": "x" * 201}, "concurrency_key"),
    ],
)
def test_bad_times_and_keys_are_refused_naming_the_field(api, tenancy, extra, field):
    message = api.error(tenancy.worker_token, "create_for", {"queue": "default", "title": "t", **extra}, "invalid")
    assert field in message
    assert todo_count() == 0

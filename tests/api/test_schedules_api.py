"""The schedule verbs over HTTP: an agent lists, creates, pauses, resumes and deletes the periodic
schedules its own endpoint owns, and nothing else; bad input names the field and writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests import factories as f
from todos import db
from todos.db import execute
from todos.store import schedules

NIGHTLY = {
    "name": "nightly",
    "cron": "0 3 * * *",
    "timezone": "Europe/Paris",
    "queue": "default",
    "title": "Write the nightly report",
    "kind": "report",
    "payload": {"scope": "all"},
    "priority": 3,
    "max_attempts": 2,
    "requires": ["gpu", "region:eu"],
}


def schedule_rows() -> list[dict]:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM schedules ORDER BY name").fetchall()


def audit(action: str) -> list[dict]:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM audit_log WHERE action = %s", (action,)).fetchall()


@pytest.fixture
def changes(store_db):
    """The schedule rows of the change log (what live pages are told), kept from the relay."""
    from todos.live.relay import PASS_LOCK

    with db.connect() as held:
        held.execute("SELECT pg_advisory_lock(%s)", (PASS_LOCK,))  # the relay leaves the rows be
        try:
            yield lambda: held.execute(
                "SELECT team_id, endpoint_id, queue FROM change_log WHERE op = 'schedule' ORDER BY id"
            ).fetchall()
        finally:
            held.execute("SELECT pg_advisory_unlock(%s)", (PASS_LOCK,))


def test_round_trip(api, tenancy, changes):
    token = tenancy.worker_token
    assert api.ok(token, "list_schedules") == {"schedules": []}

    made = api.ok(token, "create_schedule", NIGHTLY)["schedule"]
    assert {k: made[k] for k in NIGHTLY} == NIGHTLY
    assert made["paused"] is False and made["missed"] == "skip" and made["fires"] == []
    assert datetime.fromisoformat(made["next_fire_at"]) > datetime.now(UTC)
    (row,) = schedule_rows()
    assert str(row["id"]) == made["id"]
    assert row["endpoint_id"] == tenancy.worker.endpoint.id and row["team_id"] == tenancy.team.id
    (created,) = audit("schedule.create")
    assert created["actor"] == "endpoint:worker" and created["user_id"] is None
    mine = {"team_id": tenancy.team.id, "endpoint_id": tenancy.worker.endpoint.id, "queue": "default"}
    assert changes() == [mine]  # live pages are told

    paused = api.ok(token, "pause_schedule", {"id": made["id"]})["schedule"]
    assert paused["paused"] is True and schedule_rows()[0]["paused"] is True
    assert api.ok(token, "pause_schedule", {"id": made["id"]})["schedule"]["paused"] is True  # idempotent
    resumed = api.ok(token, "resume_schedule", {"id": made["id"]})["schedule"]
    assert resumed["paused"] is False
    assert len(audit("schedule.pause")) == 1 and len(audit("schedule.resume")) == 1

    # A fire shows up in the listing with its todo and the todo's state.
    fired = execute(schedules.fire_now(None, made["id"]))
    (listed,) = api.ok(token, "list_schedules")["schedules"]
    assert listed["fires"][0]["todo_id"] == fired.todo_id and listed["fires"][0]["state"] == "pending"
    assert listed["fires"][0]["how"] == "manual"
    with db.connect() as conn:
        todo = conn.execute("SELECT requires, priority FROM todos WHERE id = %s", (fired.todo_id,)).fetchone()
    assert todo == {"requires": ["gpu", "region:eu"], "priority": 3}

    gone = api.ok(token, "delete_schedule", {"id": made["id"]})
    assert gone == {"id": made["id"], "name": "nightly", "deleted": True}
    assert schedule_rows() == [] and len(audit("schedule.delete")) == 1
    assert changes() == [mine] * 4  # create, pause, resume, delete (the second pause changed nothing)
    api.error(token, "delete_schedule", {"id": made["id"]}, "not_found")


def test_another_endpoints_schedule_is_not_found(api, tenancy):
    sibling = f.endpoint(tenancy.team, slug="sibling", queues=("default",))
    theirs = api.ok(sibling.token, "create_schedule", NIGHTLY)["schedule"]
    by_team = execute(
        schedules.create(
            None,
            tenancy.team.id,
            now=datetime.now(UTC),
            **{**NIGHTLY, "name": "team's"},
            endpoint_id=sibling.endpoint.id,
        )
    )
    token = tenancy.worker_token
    assert api.ok(token, "list_schedules") == {"schedules": []}
    for verb in ("pause_schedule", "resume_schedule", "delete_schedule"):
        for schedule_id in (theirs["id"], str(by_team.id)):
            assert api.error(token, verb, {"id": schedule_id}, "not_found") == "no such schedule"
    assert [r["paused"] for r in schedule_rows()] == [False, False]
    assert [s["name"] for s in api.ok(sibling.token, "list_schedules")["schedules"]] == ["nightly", "team's"]


def test_another_teams_schedule_is_not_found(api, tenancy):
    stranger = f.endpoint(f.team(), slug="stranger", queues=("default",))
    theirs = api.ok(stranger.token, "create_schedule", NIGHTLY)["schedule"]
    mine = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]  # names are unique per team
    assert [s["id"] for s in api.ok(tenancy.worker_token, "list_schedules")["schedules"]] == [mine["id"]]
    for verb in ("pause_schedule", "delete_schedule"):
        api.error(tenancy.worker_token, verb, {"id": theirs["id"]}, "not_found")
    assert [r["paused"] for r in schedule_rows()] == [False, False]


def test_a_schedule_is_owned_by_its_creator_whatever_the_body_says(api, tenancy):
    sibling = f.endpoint(tenancy.team, slug="sibling", queues=("default",))
    api.error(tenancy.worker_token, "create_schedule", {**NIGHTLY, "endpoint_id": str(sibling.endpoint.id)}, "invalid")
    assert schedule_rows() == []


@pytest.mark.parametrize(
    "change, field",
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "0 3 * *"}, "cron"),
        ({"cron": "   "}, "cron"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"queue": "elsewhere"}, "queue"),  # not in the caller's scope
        ({"name": ""}, "name"),
        ({"title": ""}, "title"),
        ({"priority": 40_000}, "priority"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"requires": ["no spaces"]}, "requires"),
        ({"missed": "sometimes"}, "missed"),
        ({"payload": {"a": "\u0000"}}, "payload"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(api, tenancy, changes, change, field):
    message = api.error(tenancy.worker_token, "create_schedule", {**NIGHTLY, **change}, "invalid")
    assert field in message
    assert schedule_rows() == [] and audit("schedule.create") == [] and changes() == []


def test_a_name_the_team_already_uses_is_refused(api, tenancy):
    sibling = f.endpoint(tenancy.team, slug="sibling", queues=("default",))
    api.ok(sibling.token, "create_schedule", NIGHTLY)
    message = api.error(tenancy.worker_token, "create_schedule", NIGHTLY, "invalid")
    assert "name" in message and len(schedule_rows()) == 1


@pytest.mark.parametrize("verb", ["pause_schedule", "resume_schedule", "delete_schedule"])
def test_a_bad_or_unknown_id(api, tenancy, verb):
    assert "id" in api.error(tenancy.worker_token, verb, {"id": "not-a-uuid"}, "invalid")
    api.error(tenancy.worker_token, verb, {"id": "00000000-0000-4000-8000-000000000001"}, "not_found")


def test_without_the_scope_verb_every_schedule_verb_is_forbidden(api, tenancy):
    narrow = f.endpoint(tenancy.team, slug="narrow", queues=("default",), verbs=["list_todos", "claim_next"])
    for verb, body in (
        ("list_schedules", {}),
        ("create_schedule", NIGHTLY),
        ("pause_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
        ("resume_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
        ("delete_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
    ):
        assert verb in api.error(narrow.token, verb, body, "forbidden")
    assert schedule_rows() == []

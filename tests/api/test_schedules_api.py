"""The schedule verbs over HTTP: an agent lists, creates, pauses, resumes and deletes the periodic
schedules its own endpoint owns, and nothing else; bad input names the field and writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from tests import factories
from todos.core import db
from todos.core.db import execute
from todos.core.store import schedules

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
    assert api.ok(token, "list_schedules") == {"schedules": [], "next_cursor": None}

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
    sibling = factories.endpoint(tenancy.team, slug="sibling", queues=("default",))
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
    assert api.ok(token, "list_schedules") == {"schedules": [], "next_cursor": None}
    for verb in ("fire_schedule", "pause_schedule", "resume_schedule", "delete_schedule"):
        for schedule_id in (theirs["id"], str(by_team.id)):
            assert api.error(token, verb, {"id": schedule_id}, "not_found") == "no such schedule"
    for schedule_id in (theirs["id"], str(by_team.id)):
        edit = {**NIGHTLY, "id": schedule_id, "title": "Hijacked"}
        assert api.error(token, "update_schedule", edit, "not_found") == "no such schedule"
    assert [(r["paused"], r["title"]) for r in schedule_rows()] == [(False, NIGHTLY["title"])] * 2
    assert fired_todos() == [] and audit("schedule.edit") == [] and audit("schedule.fire") == []
    assert [s["name"] for s in api.ok(sibling.token, "list_schedules")["schedules"]] == ["nightly", "team's"]


def test_another_teams_schedule_is_not_found(api, tenancy):
    stranger = factories.endpoint(factories.team(), slug="stranger", queues=("default",))
    theirs = api.ok(stranger.token, "create_schedule", NIGHTLY)["schedule"]
    mine = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]  # names are unique per team
    assert [s["id"] for s in api.ok(tenancy.worker_token, "list_schedules")["schedules"]] == [mine["id"]]
    for verb in ("pause_schedule", "delete_schedule"):
        api.error(tenancy.worker_token, verb, {"id": theirs["id"]}, "not_found")
    assert [r["paused"] for r in schedule_rows()] == [False, False]


def test_a_schedule_is_owned_by_its_creator_whatever_the_body_says(api, tenancy):
    sibling = factories.endpoint(tenancy.team, slug="sibling", queues=("default",))
    api.error(tenancy.worker_token, "create_schedule", {**NIGHTLY, "endpoint_id": str(sibling.endpoint.id)}, "invalid")
    assert schedule_rows() == []
    made = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]
    edit = {**NIGHTLY, "id": made["id"], "endpoint_id": str(sibling.endpoint.id)}
    assert "endpoint_id" in api.error(tenancy.worker_token, "update_schedule", edit, "invalid")
    assert [r["endpoint_id"] for r in schedule_rows()] == [tenancy.worker.endpoint.id]


def fired_todos() -> list[dict]:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM todos WHERE source = 'schedule' ORDER BY created_at").fetchall()


def test_update_replaces_the_definition_and_audits_each_change(api, tenancy, changes):
    token = tenancy.worker_token
    made = api.ok(token, "create_schedule", NIGHTLY)["schedule"]
    paused = api.ok(token, "pause_schedule", {"id": made["id"]})["schedule"]
    edit = {**NIGHTLY, "id": made["id"], "cron": "30 6 * * 1-5", "title": "Write the morning report"}
    del edit["priority"], edit["requires"]  # left out: back to their defaults, not kept
    edited = api.ok(token, "update_schedule", edit)["schedule"]
    assert edited["cron"] == "30 6 * * 1-5" and edited["title"] == "Write the morning report"
    assert edited["priority"] == 0 and edited["requires"] == [] and edited["kind"] == "report"
    assert edited["paused"] is True  # an edit does not pause or resume
    assert edited["next_fire_at"] != paused["next_fire_at"]
    fire_at = datetime.fromisoformat(edited["next_fire_at"]).astimezone(ZoneInfo("Europe/Paris"))
    assert (fire_at.hour, fire_at.minute) == (6, 30) and fire_at.isoweekday() <= 5
    (row,) = schedule_rows()
    assert (row["cron"], row["priority"], row["requires"]) == ("30 6 * * 1-5", 0, [])
    (edited_audit,) = audit("schedule.edit")
    assert edited_audit["actor"] == "endpoint:worker"
    detail = edited_audit["detail"]
    assert detail["cron"] == {"old": "0 3 * * *", "new": "30 6 * * 1-5"}
    assert detail["priority"] == {"old": 3, "new": 0}
    assert "name" not in detail and "timezone" not in detail  # unchanged fields are not listed
    assert len(changes()) == 3  # create, pause, edit: live pages are told


@pytest.mark.parametrize(
    "change, field",
    [({"cron": "61 * * * *"}, "cron"), ({"timezone": "Mars/Olympus"}, "timezone"), ({"queue": "elsewhere"}, "queue")],
)
def test_a_bad_update_names_the_field_and_changes_nothing(api, tenancy, changes, change, field):
    made = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]
    before = schedule_rows()
    message = api.error(tenancy.worker_token, "update_schedule", {**NIGHTLY, "id": made["id"], **change}, "invalid")
    assert field in message
    assert schedule_rows() == before and audit("schedule.edit") == [] and len(changes()) == 1


def test_an_update_must_send_the_whole_definition(api, tenancy):
    made = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]
    message = api.error(tenancy.worker_token, "update_schedule", {"id": made["id"], "title": "Only this"}, "invalid")
    assert "name" in message or "cron" in message
    assert schedule_rows()[0]["title"] == NIGHTLY["title"]


def test_fire_schedule_creates_one_todo_now_and_keeps_the_timetable(api, tenancy):
    token = tenancy.worker_token
    made = api.ok(token, "create_schedule", NIGHTLY)["schedule"]
    api.ok(token, "pause_schedule", {"id": made["id"]})  # a paused schedule fires when asked
    fired = api.ok(token, "fire_schedule", {"id": made["id"]})
    (todo,) = fired_todos()
    assert fired["todo_id"] == todo["id"] and todo["state"] == "pending"
    assert todo["endpoint_id"] == tenancy.worker.endpoint.id
    assert (todo["title"], todo["priority"], todo["requires"]) == (NIGHTLY["title"], 3, ["gpu", "region:eu"])
    assert fired["schedule"]["fires"][0]["todo_id"] == todo["id"] and fired["schedule"]["fires"][0]["how"] == "manual"
    assert fired["schedule"]["next_fire_at"] == made["next_fire_at"] and fired["schedule"]["paused"] is True
    (fire_audit,) = audit("schedule.fire")
    assert fire_audit["actor"] == "endpoint:worker" and fire_audit["todo_id"] == todo["id"]
    claimed = api.ok(token, "claim_next", {"capabilities": ["gpu", "region:eu"]})
    assert claimed["todo"]["id"] == todo["id"]  # its own work, claimable at once
    second = api.ok(token, "fire_schedule", {"id": made["id"]})
    assert second["todo_id"] != todo["id"] and len(fired_todos()) == 2


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
    sibling = factories.endpoint(tenancy.team, slug="sibling", queues=("default",))
    api.ok(sibling.token, "create_schedule", NIGHTLY)
    message = api.error(tenancy.worker_token, "create_schedule", NIGHTLY, "invalid")
    assert "name" in message and len(schedule_rows()) == 1


def test_list_schedules_pages_by_name(api, tenancy):
    token = tenancy.worker_token
    names = ["b", "a", "été", "c", "d"]
    for name in names:
        api.ok(token, "create_schedule", {**NIGHTLY, "name": name})
    pages, cursor = [], None
    while True:
        page = api.ok(token, "list_schedules", {"limit": 2, **({"cursor": cursor} if cursor else {})})
        pages.append([s["name"] for s in page["schedules"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    in_order = [row["name"] for row in schedule_rows()]  # the database's collation decides the order
    assert sum(pages, []) == in_order and sorted(in_order) == sorted(names)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert len(api.ok(token, "list_schedules")["schedules"]) == 5  # the default page holds them all
    after_c = api.ok(token, "list_schedules", {"cursor": "c"})["schedules"]  # any name is a position
    assert [s["name"] for s in after_c] == in_order[in_order.index("c") + 1 :]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"cursor": "   "}, "cursor"),  # blank
        ({"cursor": "two\nlines"}, "cursor"),
        ({"cursor": "x" * 201}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
    ],
)
def test_a_bad_page_request_names_the_field(api, tenancy, body, field):
    assert field in api.error(tenancy.worker_token, "list_schedules", body, "invalid")


@pytest.mark.parametrize(
    "verb", ["fire_schedule", "update_schedule", "pause_schedule", "resume_schedule", "delete_schedule"]
)
def test_a_bad_or_unknown_id(api, tenancy, verb):
    body = NIGHTLY if verb == "update_schedule" else {}
    assert "id" in api.error(tenancy.worker_token, verb, {**body, "id": "not-a-uuid"}, "invalid")
    api.error(tenancy.worker_token, verb, {**body, "id": "00000000-0000-4000-8000-000000000001"}, "not_found")


def test_without_the_scope_verb_every_schedule_verb_is_forbidden(api, tenancy):
    narrow = factories.endpoint(tenancy.team, slug="narrow", queues=("default",), verbs=["list_todos", "claim_next"])
    for verb, body in (
        ("list_schedules", {}),
        ("create_schedule", NIGHTLY),
        ("update_schedule", {**NIGHTLY, "id": "00000000-0000-4000-8000-000000000001"}),
        ("fire_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
        ("pause_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
        ("resume_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
        ("delete_schedule", {"id": "00000000-0000-4000-8000-000000000001"}),
    ):
        assert verb in api.error(narrow.token, verb, body, "forbidden")
    assert schedule_rows() == []

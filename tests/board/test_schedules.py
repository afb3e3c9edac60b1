"""The Schedules page: list with next fire times, create, edit with the preview as you type (the
htmx fragment), pause/resume, fire now, delete, last fires linked to their todos; errors that name
the field and write nothing; viewers see but do not change."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from tests.support.board import htmx
from todos.core.db import connect, execute
from todos.core.store import schedules as schedule_store

pytestmark = pytest.mark.usefixtures("store_db")


def count(table: str) -> int:
    with connect() as conn:
        return conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]  # type: ignore[arg-type]


def form(world, **overrides):
    data = {
        "team": "acme",
        "name": "hourly sync",
        "cron": "0 * * * *",
        "timezone": "Europe/Paris",
        "endpoint": str(world.acme_ep.id),
        "queue": "email",
        "title": "Sync mailboxes",
        "kind": "sync",
        "payload": '{"full": false}',
        "priority": "2",
        "max_attempts": "3",
        "missed": "catch_up",
    }
    return {**data, **overrides}


def acme_schedule(world, **overrides) -> schedule_store.Schedule:
    fields = {k: v for k, v in form(world, **overrides).items() if k not in ("team", "endpoint")}
    fields.update(payload=None, priority=int(fields["priority"]), max_attempts=int(fields["max_attempts"]))
    return execute(
        schedule_store.create(None, world.acme.id, now=datetime.now(UTC), endpoint_id=world.acme_ep.id, **fields)
    )


def test_nav_link_and_empty_page(world, alice_client):
    page = alice_client.get(reverse("schedules")).content.decode()
    assert f'href="{reverse("schedules")}" aria-current="page"' in page
    assert "No schedules yet." in page and "New schedule" in page


def test_create_then_list_shows_next_fire(world, alice_client):
    response = alice_client.post(reverse("schedule_create"), form(world))
    assert response.status_code == 302
    page = alice_client.get(reverse("schedules")).content.decode()
    assert "hourly sync" in page and "0 * * * *" in page and "acme-worker/email" in page
    assert "<time datetime=" in page and "not fired yet" in page


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cron": "0 * * *"}, "cron: does not parse: Wrong number of fields"),
        ({"cron": "0 9 * * FUNDAY"}, "cron: does not parse: Bad day-of-week"),
        ({"timezone": "Europe/Atlantis"}, "timezone: unknown time zone &#x27;Europe/Atlantis&#x27;"),
        ({"queue": "billing"}, "queue: is not in the owner endpoint&#x27;s scope"),
        ({"payload": "{nope"}, "payload: not JSON"),
        ({"priority": "high"}, "priority: must be a whole number"),
    ],
)
def test_bad_fields_are_named_and_nothing_is_written(world, alice_client, overrides, message):
    response = alice_client.post(reverse("schedule_create"), form(world, **overrides))
    assert response.status_code == 422
    assert message in response.content.decode()
    assert count("schedules") == 0


def test_owner_endpoint_of_another_team_is_refused(world, alice_client):
    response = alice_client.post(reverse("schedule_create"), form(world, endpoint=str(world.globex_ep.id)))
    assert response.status_code == 422
    assert "endpoint: must be an active endpoint of the schedule&#x27;s team" in response.content.decode()
    assert count("schedules") == 0


def test_preview_fragment_computes_the_next_five(world, alice_client):
    response = alice_client.get(reverse("schedule_preview"), {"cron": "30 8 * * *", "timezone": "Asia/Tokyo"}, **htmx())
    body = response.content.decode()
    assert response.status_code == 200 and "Next five fire times (cron read in Asia/Tokyo)" in body
    # in the viewer's zone (UTC: nobody chose), with the schedule's own beside each
    assert (
        body.count("<li>") == 5 and body.count("23:30 UTC</time>") == 5 and body.count("08:30 JST in Asia/Tokyo") == 5
    )
    bad = alice_client.get(reverse("schedule_preview"), {"cron": "99 * * * *", "timezone": "UTC"}, **htmx())
    assert "cron: does not parse: Bad minute" in bad.content.decode()
    # the form asks for it as you type
    page = alice_client.get(reverse("schedules")).content.decode()
    assert f'hx-get="{reverse("schedule_preview")}"' in page and 'hx-trigger="input changed delay:250ms"' in page


def test_edit_pause_resume_fire_delete(world, alice_client):
    made = acme_schedule(world)
    url = reverse("schedule_detail", args=[made.id])
    page = alice_client.get(url).content.decode()
    assert "Next five fire times (cron read in Europe/Paris)" in page and "Fire now" in page
    assert alice_client.post(url, form(world, cron="15 6 * * MON", name="weekly")).status_code == 302
    bad = alice_client.post(url, form(world, cron="15 6 * * MOONDAY"))
    assert bad.status_code == 422 and "cron: does not parse" in bad.content.decode()
    with connect() as conn:
        assert conn.execute("SELECT cron, name FROM schedules").fetchone() == {"cron": "15 6 * * MON", "name": "weekly"}
    assert alice_client.post(reverse("schedule_pause", args=[made.id])).status_code == 302
    assert "paused" in alice_client.get(url).content.decode()
    alice_client.post(reverse("schedule_resume", args=[made.id]))
    alice_client.post(reverse("schedule_fire", args=[made.id]))
    with connect() as conn:
        todo = conn.execute("SELECT id, state FROM todos WHERE source = 'schedule'").fetchone()
    page = alice_client.get(url).content.decode()
    assert f'href="{reverse("todo_detail", args=[todo["id"]])}"' in page and "manual" in page and "pending" in page
    assert alice_client.post(reverse("schedule_delete", args=[made.id])).status_code == 302
    assert count("schedules") == 0
    with connect() as conn:
        actions = [
            r["action"]
            for r in conn.execute("SELECT action FROM audit_log WHERE action LIKE 'schedule.%%' ORDER BY id")
        ]
    assert actions == [
        "schedule.create",
        "schedule.edit",
        "schedule.pause",
        "schedule.resume",
        "schedule.fire",
        "schedule.delete",
    ]


def test_delete_asks_in_the_boards_own_dialog_and_no_page_carries_an_inline_handler(world, alice_client):
    """The Content-Security-Policy allows no inline script, so an ``onsubmit="return confirm(…)"``
    is blocked by the browser and the form goes without asking. Delete asks the way every other
    destructive action does: a button naming a <dialog> that board.js opens."""
    made = acme_schedule(world)
    page = alice_client.get(reverse("schedule_detail", args=[made.id])).content.decode()
    assert not re.search(r"\son[a-z]+\s*=", page), "an inline event handler"
    opener = re.search(r'data-confirm="([^"]+)"', page)
    assert opener is not None and f'<dialog id="{opener.group(1)}"' in page
    assert "Delete this schedule? Its todos stay." in page


def test_viewer_sees_but_cannot_change(world, vera_client):
    made = acme_schedule(world)
    page = vera_client.get(reverse("schedule_detail", args=[made.id])).content.decode()
    assert (
        "hourly sync" in page
        and "Fire now" not in page
        and "New schedule" not in vera_client.get(reverse("schedules")).content.decode()
    )
    for name in ("schedule_fire", "schedule_pause", "schedule_delete"):
        assert vera_client.post(reverse(name, args=[made.id])).status_code == 403
    assert count("schedule_fires") == 0 and count("schedules") == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"payload": "[" * 100_000}, "payload: nested too deeply"),
        ({"payload": "[" * 70 + "]" * 70}, "payload: "),
        ({"priority": "9" * 40}, "priority: must be from -32768 to 32767"),
        ({"max_attempts": "101"}, "max_attempts: "),
        ({"name": "x" * 201}, "name: must be at most 200 characters"),
        ({"timezone": ""}, "timezone: is required"),
    ],
)
def test_hostile_fields_are_named_and_write_nothing(world, alice_client, overrides, message):
    response = alice_client.post(reverse("schedule_create"), form(world, **overrides))
    assert response.status_code == 422 and message in response.content.decode()
    assert count("schedules") == 0


def test_a_nul_in_a_field_is_refused_before_the_store(world, alice_client):
    response = alice_client.post(reverse("schedule_create"), form(world, cron="0 *\x00 * * *"))
    assert response.status_code == 400 and "cron: must not contain NUL" in response.content.decode()
    assert count("schedules") == 0


def test_names_and_titles_are_escaped(world, alice_client):
    acme_schedule(world, name="<script>alert(1)</script>", title="<img src=x onerror=alert(2)>")
    page = alice_client.get(reverse("schedules")).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page


def test_edit_to_another_teams_endpoint_is_refused(world, alice_client):
    made = acme_schedule(world)
    response = alice_client.post(
        reverse("schedule_detail", args=[made.id]), form(world, endpoint=str(world.globex_ep.id))
    )
    assert response.status_code == 422 and "endpoint: must be an active endpoint" in response.content.decode()
    with connect() as conn:
        assert conn.execute("SELECT endpoint_id FROM schedules").fetchone()["endpoint_id"] == world.acme_ep.id


def test_schedule_changes_are_in_the_activity_log(world, alice_client):
    alice_client.post(reverse("schedule_create"), form(world))
    page = alice_client.get(reverse("activity"), {"action": "schedule.*"}).content.decode()
    assert "schedule.create" in page and "hourly sync" in page and "unknown action" not in page
    exact = alice_client.get(reverse("activity"), {"action": "schedule.create"}).content.decode()
    assert "schedule.create" in exact and "unknown action" not in exact


def test_every_change_to_a_schedule_is_logged_for_its_teams_live_pages(world, alice_client):
    from todos.live.relay import PASS_LOCK

    with connect() as held:
        held.execute("SELECT pg_advisory_lock(%s)", (PASS_LOCK,))  # the relay leaves the rows be
        try:
            made = acme_schedule(world)
            url = reverse("schedule_detail", args=[made.id])
            alice_client.post(url, form(world, name="renamed"))
            alice_client.post(url, form(world, cron="not cron"))  # refused: logs nothing
            alice_client.post(reverse("schedule_pause", args=[made.id]))
            alice_client.post(reverse("schedule_pause", args=[made.id]))  # already paused: no change
            alice_client.post(reverse("schedule_resume", args=[made.id]))
            alice_client.post(reverse("schedule_delete", args=[made.id]))
            rows = held.execute(
                "SELECT team_id, endpoint_id, queue FROM change_log WHERE op = 'schedule' ORDER BY id"
            ).fetchall()
        finally:
            held.execute("SELECT pg_advisory_unlock(%s)", (PASS_LOCK,))
    assert rows == [{"team_id": world.acme.id, "endpoint_id": world.acme_ep.id, "queue": "email"}] * 5


def test_the_list_is_a_live_region_served_alone(world, alice_client, bob_client):
    acme_schedule(world)
    page = alice_client.get(reverse("schedules")).content.decode()
    assert 'data-live-page="schedules"' in page
    assert f'data-live-region="schedules" hx-get="{reverse("schedules_panel")}"' in page
    panel = alice_client.get(reverse("schedules_panel"), **htmx()).content.decode()
    assert panel.startswith('<section id="schedules-panel"') and "hourly sync" in panel
    assert "New schedule" not in panel  # the region only
    assert "hourly sync" not in bob_client.get(reverse("schedules_panel"), **htmx()).content.decode()


def test_requires_is_kept_edited_audited_and_carried_by_the_fired_todo(world, alice_client):
    assert alice_client.post(reverse("schedule_create"), form(world, requires="gpu, region:eu gpu")).status_code == 302
    with connect() as conn:
        made = conn.execute("SELECT id, requires FROM schedules").fetchone()
    assert made["requires"] == ["gpu", "region:eu"]
    url = reverse("schedule_detail", args=[made["id"]])
    assert 'name="requires"' in (page := alice_client.get(url).content.decode()) and 'value="gpu region:eu"' in page
    assert alice_client.post(url, form(world, requires="arm64")).status_code == 302
    alice_client.post(reverse("schedule_fire", args=[made["id"]]))
    with connect() as conn:
        todo = conn.execute("SELECT requires FROM todos WHERE source = 'schedule'").fetchone()
        edit = conn.execute("SELECT detail FROM audit_log WHERE action = 'schedule.edit'").fetchone()
    assert todo["requires"] == ["arm64"]
    assert edit["detail"]["requires"] == {"old": ["gpu", "region:eu"], "new": ["arm64"]}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("gpu ,bad!label", "requires: label 2: must be letters, digits"),
        (" ".join(f"l{n}" for n in range(17)), "requires: must list at most 16 labels, got 17"),
        ("x" * 65, "requires: label 1: must be at most 64 characters, got 65"),
    ],
)
def test_bad_requires_is_named_and_nothing_is_written(world, alice_client, value, problem):
    response = alice_client.post(reverse("schedule_create"), form(world, requires=value))
    assert response.status_code == 422 and problem in response.content.decode()
    assert count("schedules") == 0
    made = acme_schedule(world, requires=None)
    edited = alice_client.post(reverse("schedule_detail", args=[made.id]), form(world, requires=value))
    assert edited.status_code == 422 and problem in edited.content.decode()
    with connect() as conn:
        assert conn.execute("SELECT requires FROM schedules").fetchone()["requires"] == []

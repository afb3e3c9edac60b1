"""Defects a new user met on the Board, each pinned where no browser is needed: the schedule
preview's fragment keeps its own id, a huge priority is not echoed whole, the endpoint form lists
every verb a scope verb grants, Activity words every code, a dead letter says failed or died by
its last attempt, and People asks before it resets a password or deactivates."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests import factories
from tests.board.test_schedules import acme_schedule, count, form
from tests.support.board import htmx, login, make
from todos.agents.api.verbs import TABLE
from todos.core.db import connect, execute
from todos.core.selectors import activity as activity_reads
from todos.core.store import background
from todos.core.store import schedules as schedule_store
from todos.dashboard import wording

pytestmark = pytest.mark.usefixtures("store_db")


# --- the schedule form's preview ----------------------------------------------------------------


def test_the_preview_fragment_is_the_element_it_replaces(world, alice_client):
    """The swap is outerHTML: the answer must carry the id the next edit targets."""
    for query in ({"cron": "30 8 * * *", "timezone": "UTC"}, {"cron": "99 * * * *", "timezone": "UTC"}):
        body = alice_client.get(reverse("schedule_preview"), query, **htmx("sch-preview")).content.decode()
        assert body.startswith('<div id="sch-preview"'), body[:80]
    page = alice_client.get(reverse("schedules")).content.decode()
    assert page.count('id="sch-preview"') == 1


# --- a huge number on the schedule form ------------------------------------------------------------


@pytest.mark.parametrize("digits", [40, 4_000, 5_000])
def test_a_huge_priority_is_not_echoed_and_the_range_is_named(world, alice_client, digits):
    huge = "9" * digits
    response = alice_client.post(reverse("schedule_create"), form(world, priority=huge))
    body = response.content.decode()
    assert response.status_code == 422
    assert "priority: must be" in body and "from -32768 to 32767" in body
    errors = re.findall(r'<p class="form-error"[^>]*>(.*?)</p>', body, re.S)
    assert errors and all(len(e) < 120 for e in errors), errors
    assert count("schedules") == 0


def test_a_short_priority_out_of_range_still_says_what_was_typed(world, alice_client):
    body = alice_client.post(reverse("schedule_create"), form(world, priority="40000")).content.decode()
    assert "priority: must be from -32768 to 32767, got 40000" in body
    body = alice_client.post(reverse("schedule_create"), form(world, max_attempts="0")).content.decode()
    assert "max_attempts: must be from 1 to 100, got 0" in body
    assert count("schedules") == 0


# --- the endpoint form's verb hint -------------------------------------------------------------


def test_the_endpoint_form_lists_every_verb_the_schedules_scope_grants(world):
    admin = login(world.adam_user)
    body = admin.get(reverse("endpoint_vend"), {"team": "acme"}).content.decode()
    granted = [v.name for v in TABLE if "schedules" in v.granted_by]
    assert {"update_schedule", "fire_schedule"} <= set(granted)
    hint = re.search(r'<p class="hint">Some verbs bring others with them:(.*?)</p>', body, re.S).group(1)
    assert f"schedules</strong> ⇒ {', '.join(granted)}" in hint
    for verb in TABLE:  # every verb granted by a scope verb of another name is in the hint
        for scope in verb.granted_by - {verb.name}:
            assert re.search(rf"{scope}</strong> ⇒ [^;]*\b{verb.name}\b", hint), (scope, verb.name)
    help_text = re.search(r'<dt class="mono">schedules</dt><dd>(.*?)</dd>', body).group(1)
    assert "update_schedule" in help_text and "fire_schedule" in help_text


# --- Activity in words --------------------------------------------------------------------------


def test_every_action_activity_offers_is_worded():
    unworded = [code for code in activity_reads.ACTIONS if wording.action(code) == code]
    assert unworded == []


def test_activity_shows_a_schedule_row_in_words(world, alice_client):
    schedule = acme_schedule(world)
    execute(schedule_store.fire_now(None, schedule.id))
    execute(schedule_store.set_paused(None, schedule.id, True, now=schedule.next_fire_at))
    body = alice_client.get(reverse("activity")).content.decode()
    actions = re.findall(r'<span class="audit-action">(.*?)</span> <code class="code-note">(.*?)</code>', body)
    by_code = {code: words for words, code in actions}
    assert by_code["schedule.fire"] == "fired a schedule now"
    assert by_code["schedule.create"] == "created a schedule"
    assert by_code["schedule.pause"] == "paused a schedule"
    assert all(words != code for words, code in actions), actions


# --- a dead letter's label -------------------------------------------------------------------------


def test_a_dead_letters_label_says_failed_or_died_by_its_outcome(world, alice_client):
    failed = make(world, "dead", title="reported its failure")  # the worker called fail
    died = make(world, "claimed", title="its worker vanished", max_attempts=1)
    with connect() as conn:  # the lease lapsed; the reaper dead-letters it
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 minute' WHERE id = %s", (died.id,))
        conn.execute(
            "UPDATE todo_attempts SET lease_expires_at = now() - interval '1 minute' WHERE todo_id = %s", (died.id,)
        )
    execute(background.reap())
    body = alice_client.get(reverse("todo_list"), {"state": "dead"}).content.decode()

    def label(todo_id: str) -> str:
        row = re.search(rf'<tr id="todo-{todo_id}".*?</tr>', body, re.S).group(0)
        return re.search(r'<span class="visually-hidden">([^<]*)</span>', row.split("dead-reason", 1)[1]).group(1)

    assert label(failed.id) == "Failed:"
    assert label(died.id) == "Died:"


# --- People asks first ------------------------------------------------------------------------------


@pytest.fixture
def root(world):
    return login(factories.user("root", superuser=True))


def active(user) -> bool:
    return get_user_model().objects.get(pk=user.pk).is_active


def password_of(user) -> str:
    return get_user_model().objects.get(pk=user.pk).password


@pytest.mark.parametrize(
    ("route", "question", "button"),
    [
        ("person_deactivate", "Deactivate alice?", "Deactivate"),
        ("person_password_reset", "Reset the password of alice?", "Reset password"),
    ],
)
def test_people_asks_before_a_destructive_action(world, root, route, question, button):
    alice = world.alice_user
    before = (active(alice), password_of(alice))
    listing = root.get(reverse("people")).content.decode()
    row = re.search(rf'<tr id="person-{alice.id}">.*?</tr>', listing, re.S).group(0)
    assert (
        f'<a class="button small{" danger" if route == "person_deactivate" else ""}" '
        f'href="{reverse(route, args=[alice.id])}"' in row
    )
    assert "<form" not in row  # one click on the list changes nothing
    asked = root.get(reverse(route, args=[alice.id]))
    body = asked.content.decode()
    assert asked.status_code == 200 and f"<h1>{question}</h1>" in body
    assert f'<form method="post" action="{reverse(route, args=[alice.id])}"' in body
    assert f'<button type="submit" class="button danger">{button}</button>' in body
    assert (active(alice), password_of(alice)) == before  # asking wrote nothing
    answered = root.post(reverse(route, args=[alice.id]))
    assert answered.status_code in (200, 302)
    assert (active(alice), password_of(alice)) != before


def test_the_confirmation_of_an_unknown_person_is_not_found_and_others_are_refused(world, root):
    assert root.get(reverse("person_deactivate", args=[999_999])).status_code == 404
    assert root.get(reverse("person_password_reset", args=[999_999])).status_code == 404
    for client in (login(world.adam_user), login(world.alice_user)):
        assert client.get(reverse("person_deactivate", args=[world.alice_user.id])).status_code == 403


def test_the_confirmation_of_a_deactivated_person_goes_back_to_the_list(world, root):
    root.post(reverse("person_deactivate", args=[world.alice_user.id]))
    response = root.get(reverse("person_deactivate", args=[world.alice_user.id]))
    assert response.status_code == 302 and response["Location"] == reverse("people")


# --- dead letters by reason: the groups follow a finished job -----------------------------------


def test_the_groups_reload_when_a_bulk_job_finishes(world, alice_client):
    make(world, "dead", title="one dead letter")
    body = alice_client.get(reverse("dead_letter_groups")).content.decode()
    region = re.search(r'<div id="dead-letter-groups"([^>]*)>', body).group(1)
    assert 'hx-trigger="board:bulk-finished from:body"' in region and 'hx-select="#dead-letter-groups"' in region
    assert body.index('id="dead-letter-groups"') < body.index('class="groups-table"')

"""The Board's schedule form and its preview refuse a cron expression of six fields (seconds
first): the form says so under ``cron`` and writes nothing; the preview shows the same words."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.board.test_schedules import acme_schedule, count, form
from tests.support.board import htmx

pytestmark = pytest.mark.usefixtures("store_db")

SIX = "*/5 * * * * *"
PROBLEM = "cron: does not parse: Wrong number of fields in &#x27;*/5 * * * * *&#x27;: 6, not five"


def test_the_create_form_refuses_six_fields(world, alice_client):
    response = alice_client.post(reverse("schedule_create"), form(world, cron=SIX))
    assert response.status_code == 422
    assert PROBLEM in response.content.decode()
    assert count("schedules") == 0


def test_the_edit_form_refuses_six_fields(world, alice_client):
    made = acme_schedule(world)
    response = alice_client.post(reverse("schedule_detail", args=[made.id]), form(world, cron=SIX))
    assert response.status_code == 422
    assert PROBLEM in response.content.decode()
    assert count("schedules") == 1


def test_the_preview_refuses_six_fields(world, alice_client):
    response = alice_client.get(reverse("schedule_preview"), {"cron": SIX, "timezone": "UTC"}, **htmx())
    assert PROBLEM in response.content.decode()
    assert "<li>" not in response.content.decode()

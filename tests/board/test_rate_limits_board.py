"""The Board's side of rate limits: the overview's "Rate limits" section (throttled keys first,
with what waits and when the next allowance comes), setting and removing a limit there (a team
admin's), and a todo's rate key and limit in the drawer."""

from __future__ import annotations

import json

from django.urls import reverse

from tests.factories import relayed
from tests.support.board import htmx, login, make
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store
from todos.core.store import rate_limits


def limits() -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute("SELECT key, allowance, per FROM rate_limits").fetchall()
    return {r["key"]: f"{r['allowance']} per {r['per']}" for r in rows}


def test_a_throttled_key_shows_what_waits_and_when_it_refills(world, alice_client):
    execute(rate_limits.set_limit(None, world.acme.id, "crawl", 1, "hour"))
    execute(rate_limits.set_limit(None, world.acme.id, "quiet", 5, "minute"))
    first = make(world, "pending", title="page one", rate_key="crawl")
    make(world, "pending", title="page two", rate_key="crawl")
    execute(agent_store.claim_next(world.agent))
    relayed()
    overview = alice_client.get(reverse("overview")).content.decode()
    assert "Rate limits" in overview
    throttled = overview.index('data-rate-key="crawl" class="throttled"')
    assert throttled < overview.index('data-rate-key="quiet"')  # throttled first
    row = overview[throttled : overview.index("</tr>", throttled)]
    assert "1 per hour" in row and "throttled, next" in row and "59m" in row
    assert "available now" in overview[overview.index('data-rate-key="quiet"') :]
    drawer = alice_client.get(reverse("todo_drawer", args=[first.id]), **htmx("drawer")).content.decode()
    assert "Rate key" in drawer and "crawl" in drawer and "limit: 1 per hour" in drawer


def test_the_drawer_says_an_unlimited_key_is_unlimited(world, alice_client):
    todo = make(world, "pending", rate_key="free")
    drawer = alice_client.get(reverse("todo_drawer", args=[todo.id]), **htmx("drawer")).content.decode()
    assert "no limit set: unlimited" in drawer


def test_an_admin_sets_changes_and_removes_a_limit(world):
    admin = login(world.adam_user)
    response = admin.post(
        reverse("rate_limit"),
        {"team": "acme", "key": "crawl", "limit": "60", "interval": "minute"},
        **htmx("overview-table"),
    )
    assert response.status_code == 200
    assert "60 times per minute" in json.dumps(json.loads(response["HX-Trigger"]))
    assert 'data-rate-key="crawl"' in response.content.decode()
    admin.post(reverse("rate_limit"), {"team": "acme", "key": "crawl", "limit": "10", "interval": "second"}, **htmx())
    assert limits() == {"crawl": "10 per second"}
    gone = admin.post(reverse("rate_limit"), {"team": "acme", "key": "crawl", "remove": "1"}, **htmx("overview-table"))
    assert gone.status_code == 200 and limits() == {}


def test_refusals_name_the_field_and_change_nothing(world, alice_client, vera_client, bob_client):
    admin = login(world.adam_user)
    for body, words in (
        ({"key": "k", "limit": "0", "interval": "second"}, "limit: must be"),
        ({"key": "k", "limit": "10001", "interval": "second"}, "limit: must be"),
        ({"key": "k", "limit": "5", "interval": "day"}, "interval: must be one of"),
        ({"key": "", "limit": "5", "interval": "second"}, "key: must not be empty"),
        ({"key": "k" * 201, "limit": "5", "interval": "second"}, "key: must be at most 200"),
    ):
        bad = admin.post(reverse("rate_limit"), {"team": "acme", **body}, **htmx())
        assert bad.status_code == 422 and words in json.dumps(json.loads(bad["HX-Trigger"]))
    body = {"team": "acme", "key": "k", "limit": "5", "interval": "second"}
    assert alice_client.post(reverse("rate_limit"), body, **htmx()).status_code == 403  # an operator
    assert vera_client.post(reverse("rate_limit"), body, **htmx()).status_code == 403  # a viewer
    assert bob_client.post(reverse("rate_limit"), body, **htmx()).status_code == 404  # another team's
    assert limits() == {}


def test_another_team_s_limits_are_not_shown(world, bob_client):
    execute(rate_limits.set_limit(None, world.acme.id, "acme-secret-key", 1, "hour"))
    assert "acme-secret-key" not in bob_client.get(reverse("overview")).content.decode()


def test_hostile_text_in_any_field_never_answers_500_and_writes_nothing(world):
    from tests.board.test_hostile_input import CONTROL_TEXTS, HUGE

    admin = login(world.adam_user)
    base = {"team": "acme", "key": "k", "limit": "2", "interval": "second"}
    for text in [*CONTROL_TEXTS.values(), HUGE]:
        for field in base:
            for headers in ({}, htmx()):
                response = admin.post(reverse("rate_limit"), {**base, field: text}, **headers)
                assert response.status_code < 500, (field, response.status_code)
    assert limits() == {}
    admin.post(reverse("rate_limit"), base)
    assert limits() == {"k": "2 per second"}

"""The Board's side of run-time limits: the drawer shows a claimed todo's limit and the time left,
a timed-out attempt reads as one, and the overview shows and (for a team admin) sets a queue's
default."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.support.board import htmx, login, make
from todos.core.db import connect, execute
from todos.core.store import background, queue_settings

pytestmark = pytest.mark.usefixtures("store_db")


def default_of(queue: str) -> int | None:
    with connect() as conn:
        row = conn.execute("SELECT timeout_seconds FROM queue_settings WHERE queue = %s", (queue,)).fetchone()
    return row["timeout_seconds"] if row else None


def overrun(todo_id: str, seconds: int) -> None:
    """Setup only: pretend the todo's open attempt began ``seconds`` ago."""
    with connect() as conn:
        conn.execute(
            """WITH t AS (UPDATE todos SET claimed_at = claimed_at - make_interval(secs => %(s)s)
                          WHERE id = %(id)s RETURNING id, attempts_total)
               UPDATE todo_attempts a SET claimed_at = a.claimed_at - make_interval(secs => %(s)s)
               FROM t WHERE a.todo_id = t.id AND a.seq = t.attempts_total""",
            {"id": todo_id, "s": seconds},
        )


def drawer(client, todo_id: str) -> str:
    return client.get(reverse("todo_drawer", args=[todo_id]), **htmx("drawer")).content.decode()


def test_the_drawer_shows_the_limit_and_the_time_left_beside_the_lease(world, alice_client):
    own = make(world, "claimed", timeout_seconds=300)
    html = drawer(alice_client, own.id)
    assert "Run-time limit" in html and "5m 00s" in html and "time left" in html
    assert "the queue&#x27;s default" not in html and "the queue's default" not in html
    plain = make(world, "claimed")
    assert "Run-time limit" not in drawer(alice_client, plain.id)
    execute(queue_settings.set_timeout(None, world.acme.id, "default", 120))
    html = drawer(alice_client, plain.id)
    assert "2m 00s" in html and "default" in html


def test_a_timed_out_attempt_reads_as_one(world, alice_client):
    t = make(world, "claimed", timeout_seconds=300, max_attempts=1)
    overrun(t.id, 301)
    assert execute(background.time_out()).ids == (t.id,)
    html = drawer(alice_client, t.id)
    assert "Timed out after 5m 0" in html and "the worker was still heartbeating" in html
    assert "it became a dead letter" in html
    assert "ran past its run-time limit of 300 seconds" in html


def test_the_overview_shows_each_queues_default_and_an_admin_sets_it(world, alice_client):
    adam = login(world.adam_user)
    page = adam.get(reverse("overview_table"), **htmx("overview-table")).content.decode()
    assert "Run-time limit" in page and 'name="timeout_seconds"' in page
    response = adam.post(
        reverse("queue_timeout"),
        {"team": "acme", "queue": "default", "timeout_seconds": "600"},
        **htmx("overview-table"),
    )
    assert response.status_code == 200
    assert "may now run 600 s" in json.dumps(json.loads(response["HX-Trigger"]))
    assert default_of("default") == 600
    assert "10m 00s" in response.content.decode()
    # an operator sees the default but no form
    seen = alice_client.get(reverse("overview_table"), **htmx("overview-table")).content.decode()
    assert "10m 00s" in seen and 'name="timeout_seconds"' not in seen
    cleared = adam.post(
        reverse("queue_timeout"), {"team": "acme", "queue": "default", "timeout_seconds": ""}, **htmx("overview-table")
    )
    assert cleared.status_code == 200 and default_of("default") is None


@pytest.mark.parametrize("value", ["0", "604801", "1.5", "soon"])
def test_a_bad_default_is_refused_naming_the_field_and_nothing_is_written(world, value):
    adam = login(world.adam_user)
    response = adam.post(
        reverse("queue_timeout"), {"team": "acme", "queue": "default", "timeout_seconds": value}, **htmx()
    )
    assert response.status_code == 422
    assert "timeout_seconds" in json.dumps(json.loads(response["HX-Trigger"]))
    assert default_of("default") is None


def test_a_bad_queue_name_is_refused(world):
    adam = login(world.adam_user)
    response = adam.post(
        reverse("queue_timeout"), {"team": "acme", "queue": "has space", "timeout_seconds": "60"}, **htmx()
    )
    assert response.status_code == 422 and "queue" in json.dumps(json.loads(response["HX-Trigger"]))


def test_only_an_admin_sets_a_default_and_another_team_is_not_found(world, alice_client, vera_client, bob_client):
    for client in (alice_client, vera_client):
        denied = client.post(
            reverse("queue_timeout"), {"team": "acme", "queue": "default", "timeout_seconds": "60"}, **htmx()
        )
        assert denied.status_code == 403
    other = bob_client.post(
        reverse("queue_timeout"), {"team": "acme", "queue": "default", "timeout_seconds": "60"}, **htmx()
    )
    assert other.status_code == 404
    assert default_of("default") is None


def test_the_agents_page_counts_a_timed_out_attempt_as_failed_not_died(world):
    from todos.core.selectors.access import viewer_for
    from todos.core.selectors.agents import agents

    t = make(world, "claimed", timeout_seconds=60)
    overrun(t.id, 61)
    assert execute(background.time_out()).ids == (t.id,)
    acme = {a.endpoint.slug: a for a in agents(viewer_for(world.alice_user))}["acme-worker"]
    assert (acme.completed, acme.failed, acme.died, acme.in_flight) == (0, 1, 0, 0)

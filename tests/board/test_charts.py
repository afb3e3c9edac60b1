"""``/charts/`` and the overview's chart: server-rendered SVG with axes, hover values and a table,
from the relay's rollup, for the viewer's teams only; bad input is a 400 naming it."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from tests.factories import relayed
from tests.support.board import make
from todos.core.db import connect
from todos.core.selectors import flow as flow_reads
from todos.core.selectors.access import viewer_for
from todos.dashboard.views import chart_svg

pytestmark = pytest.mark.usefixtures("store_db")


def finish_some(world) -> None:
    for state in ("done", "done", "done", "retry", "dead"):
        make(world, state)
    make(world, "done", queue="email")
    for state in ("done", "dead", "dead"):
        make(world, state, agent=world.globex_agent)  # globex: never alice's
    relayed()


def test_the_flow_counts_only_the_viewers_teams_per_queue_and_for_all(world):
    finish_some(world)
    alice = viewer_for(world.alice_user)
    every = flow_reads.flow(alice, range_key="1h")
    assert (every.total.completed, every.total.failed, every.total.died) == (4, 2, 0)
    assert every.total.waited_count == 6 and every.total.ran_count == 6
    assert every.total.waited_p50 is not None and every.total.ran_p95 is not None
    assert len(every.intervals) == 60 and every.intervals[-1].completed == 4  # all in this minute
    email = flow_reads.flow(alice, range_key="24h", queue="email")
    assert (email.total.completed, email.total.failed, len(email.intervals)) == (1, 0, 24)
    week = flow_reads.flow(alice, range_key="7d")
    assert len(week.intervals) == 28 and week.total.completed == 4
    assert week.intervals[-1].start <= week.now < week.intervals[-1].start + timedelta(hours=6)
    bob = flow_reads.flow(viewer_for(world.bob_user), range_key="1h")
    assert (bob.total.completed, bob.total.failed) == (1, 2)
    assert flow_reads.queues(alice) == ["default", "email"]


def test_the_charts_page_draws_axes_hover_values_and_a_table(world, alice_client):
    finish_some(world)
    body = alice_client.get(reverse("charts")).content.decode()
    assert "<h1>Charts</h1>" in body
    assert body.count("<svg viewBox=") == 2
    assert 'aria-label="Last hour, all queues: 4 completed, 2 failed, 0 died"' in body
    assert re.search(r"<title>\d\d:\d\d UTC: 4 completed, 2 failed, 0 died</title>", body)
    assert 'class="chart-completed"' in body and 'class="chart-failed"' in body
    assert re.search(r"<title>\d\d:\d\d UTC: Ran p95 [\d.]+ (ms|s) \(of 6\)</title>", body)
    assert "<caption>Last hour, all queues, per minute, newest first</caption>" in body
    assert body.count('<tr><th scope="row">') == 60
    assert 'data-live-region="charts"' in body and 'data-live-page="charts"' in body
    assert "globex" not in body.lower()


def test_a_chart_for_one_queue_and_range_and_its_live_panel(world, alice_client):
    finish_some(world)
    body = alice_client.get(reverse("charts"), {"range": "24h", "queue": "email"}).content.decode()
    assert 'aria-label="Last 24 hours, queue email: 1 completed, 0 failed, 0 died"' in body
    assert '<option value="email" selected>' in body
    panel = alice_client.get(reverse("charts_panel"), {"range": "7d", "queue": "default", "team": "acme"})
    text = panel.content.decode()
    assert panel.status_code == 200 and "<html" not in text
    assert text.startswith('<section id="charts-panel"')
    assert "Last 7 days, queue default of Acme: 3 completed, 2 failed, 0 died" in text
    assert "range=7d&amp;queue=default&amp;team=acme" in text  # it refreshes itself as it is


def test_a_queue_with_nothing_finished_says_so(world, alice_client):
    body = alice_client.get(reverse("charts"), {"queue": "quiet"}).content.decode()
    assert "Nothing finished in this range yet" in body
    assert 'aria-label="Last hour, queue quiet: 0 completed, 0 failed, 0 died"' in body


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"range": "2w"}, "range: must be one of 1h, 24h, 7d, got &#x27;2w&#x27;"),
        ({"queue": "no spaces"}, "queue: must be 1 to 128 characters"),
        ({"queue": "x" * 129}, "queue: must be 1 to 128 characters"),
    ],
)
def test_bad_input_is_a_400_naming_it(world, alice_client, query, message):
    for name in ("charts", "charts_panel"):
        response = alice_client.get(reverse(name), query)
        assert response.status_code == 400
        assert message in response.content.decode()


def test_another_teams_charts_are_not_found(world, alice_client):
    finish_some(world)
    for name in ("charts", "charts_panel"):
        foreign = alice_client.get(reverse(name), {"team": "globex"})
        unknown = alice_client.get(reverse(name), {"team": "nope"})
        assert foreign.status_code == unknown.status_code == 404
        assert foreign.content == unknown.content  # the same bytes: nothing tells them apart


def test_the_overview_shows_the_last_hour_as_a_chart(world, alice_client):
    finish_some(world)
    body = alice_client.get(reverse("overview")).content.decode()
    assert 'id="overview-chart"' in body and "<h2>The last hour</h2>" in body
    assert "4 completed · 2 failed · 0 died" in body
    assert 'aria-label="Last hour, all queues: 4 completed, 2 failed, 0 died"' in body
    fragment = alice_client.get(reverse("overview_chart")).content.decode()
    assert fragment.startswith('<section id="overview-chart"') and "4 completed · 2 failed" in fragment


def test_charts_need_a_sign_in(client, store_db):
    for name in ("charts", "charts_panel", "overview_chart"):
        response = client.get(reverse(name))
        assert response.status_code in (302, 401, 403)


def test_hour_rows_feed_the_long_ranges_and_minute_rows_the_hour(world):
    with connect() as conn:
        conn.execute(
            """INSERT INTO todo_flow (team_id, grain, queue, at, completed, failed, died, waited, ran)
               VALUES (%(t)s, 'hour', '', date_trunc('hour', now()) - interval '30 hours', 7, 1, 2,
                       array_fill(0, ARRAY[50]), array_fill(0, ARRAY[50])),
                      (%(t)s, 'minute', '', date_trunc('minute', now()) - interval '2 hours', 5, 0, 0,
                       array_fill(0, ARRAY[50]), array_fill(0, ARRAY[50]))""",
            {"t": world.acme.id},
        )
    alice = viewer_for(world.alice_user)
    assert flow_reads.flow(alice, range_key="1h").total.completed == 0  # two hours ago: outside the hour
    assert flow_reads.flow(alice, range_key="24h").total.completed == 0  # thirty hours ago: outside the day
    week = flow_reads.flow(alice, range_key="7d")
    assert (week.total.completed, week.total.failed, week.total.died) == (7, 1, 2)


def test_durations_read_as_people_read_them():
    assert [chart_svg.duration(s) for s in (None, 0.35, 4.25, 42, 252, 11160, 172800)] == [
        "—",
        "350 ms",
        "4.2 s",
        "42 s",
        "4.2 min",
        "3.1 h",
        "2.0 d",
    ]

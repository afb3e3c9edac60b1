"""One clock: every time the Board shows is rendered by the server in the zone the viewer chose
(UTC, their browser's, or an IANA name), remembered in PostgreSQL; time inputs are read in it."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from tests.support.board import htmx, login, make
from tests.support.endpoints import endpoint, vend
from todos.core.db import connect, execute
from todos.core.errors import Invalid, NotFound
from todos.core.store import preferences
from todos.dashboard import clock

pytestmark = pytest.mark.usefixtures("store_db")

NEW_YORK = ZoneInfo("America/New_York")
# A <time> in New York: ISO instant with the offset, the exact time and zone on hover, the minute
# with the zone's abbreviation as its text.
NY_TIME = re.compile(
    r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[45]:00" '
    r'title="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[45]:00 America/New_York">\d{4}-\d\d-\d\d \d\d:\d\d E[SD]T</time>'
)
UTC_TIME = re.compile(r'<time datetime="[^"]+\+00:00" title="[^"]+\+00:00 UTC">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>')


def stored_zone(user) -> str | None:
    with connect() as conn:
        row = conn.execute("SELECT time_zone FROM person_preferences WHERE user_id = %s", (user.pk,)).fetchone()
    return row["time_zone"] if row else None


def choose(client, kind: str, named: str = "", browser: str = "", follow: bool = False):
    data = {"zone_kind": kind, "named_zone": named, "browser_zone": browser, "next": reverse("activity")}
    return client.post(reverse("time_zone"), data, follow=follow)


def shown_zone(client) -> str:
    body = client.get(reverse("overview")).content.decode()
    match = re.search(r'data-time-zone="([^"]*)"', body)
    assert match, "the page names no zone"
    return match.group(1)


def next_sunday(year: int, month: int, nth: int) -> date:
    first = date(year, month, 1)
    return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (nth - 1))


def next_new_york_change(month: int, nth: int) -> date:
    """The next day New York's clocks change (second Sunday of March, first of November)."""
    today = datetime.now(UTC).date()
    for year in (today.year, today.year + 1):
        day = next_sunday(year, month, nth)
        if day > today + timedelta(days=1):
            return day
    raise AssertionError("unreachable")


# ---- the zone and its formatting -------------------------------------------------------------


def test_a_time_is_written_with_its_zone_and_its_exact_instant():
    instant = datetime(2026, 12, 2, 19, 42, 7, 123000, tzinfo=UTC)
    assert clock.short(instant, NEW_YORK) == "2026-12-02 14:42 EST"
    assert clock.short(instant, ZoneInfo("UTC")) == "2026-12-02 19:42 UTC"
    assert clock.exact(instant, NEW_YORK) == "2026-12-02T14:42:07.123-05:00 America/New_York"
    assert clock.short(instant, ZoneInfo("Asia/Kolkata")) == "2026-12-03 01:12 IST"
    with timezone.override(NEW_YORK):
        html = Template("{% load board %}{% ts t %}").render(Context({"t": instant}))
    assert html == (
        '<time datetime="2026-12-02T14:42:07.123-05:00" title="2026-12-02T14:42:07.123-05:00 America/New_York">'
        "2026-12-02 14:42 EST</time>"
    )


def test_a_schedules_fire_time_notes_the_schedules_own_zone_where_it_differs():
    fire = datetime(2026, 12, 2, 20, 0, tzinfo=UTC)
    template = Template("{% load board %}{% fire_time t zone %}")
    with timezone.override(NEW_YORK):
        paris = template.render(Context({"t": fire, "zone": "Europe/Paris"}))
        same = template.render(Context({"t": fire, "zone": "America/New_York"}))
    assert "2026-12-02 15:00 EST</time>" in paris and "(Wed 21:00 CET in Europe/Paris)" in paris
    assert "2026-12-02 15:00 EST</time>" in same and "in America/New_York" not in same


def test_a_local_time_is_read_in_the_zone():
    assert clock.parse_local("run_at", "2027-01-15T09:30", NEW_YORK) == datetime(2027, 1, 15, 14, 30, tzinfo=UTC)
    assert clock.parse_local("run_at", "2027-07-15T09:30:15", NEW_YORK) == datetime(2027, 7, 15, 13, 30, 15, tzinfo=UTC)
    # written with its offset: taken as written
    assert clock.parse_local("run_at", "2027-01-15T09:30+01:00", NEW_YORK) == datetime(2027, 1, 15, 8, 30, tzinfo=UTC)


def test_a_local_time_the_clocks_skip_is_refused_naming_the_field():
    with pytest.raises(Invalid) as refused:
        clock.parse_local("run_at", "2027-03-14T02:30", NEW_YORK)
    assert refused.value.field == "run_at"
    assert "2027-03-14 02:30 does not exist in America/New_York" in str(refused.value)


def test_a_local_time_the_clocks_pass_twice_is_the_earlier():
    when = clock.parse_local("run_at", "2027-11-07T01:30", NEW_YORK)
    assert when == datetime(2027, 11, 7, 5, 30, tzinfo=UTC)  # 01:30 EDT, an hour before 01:30 EST


@pytest.mark.parametrize("raw", ["next tuesday", "2027-13-45T99:00", "2027-01-15"])
def test_a_time_that_is_no_time_names_the_field_and_the_zone(raw):
    with pytest.raises(Invalid, match=r"run_at: must be a date and time such as .*\(in America/New_York\)"):
        clock.parse_local("run_at", raw, NEW_YORK)


# ---- the choice, remembered in PostgreSQL ---------------------------------------------------


def test_the_choice_is_remembered_in_the_database_across_sessions(world, alice_client):
    assert shown_zone(alice_client) == "UTC"  # nobody chose: BOARD_DEFAULT_TIME_ZONE
    response = choose(alice_client, "named", "America/New_York")
    assert response.status_code == 302 and response["Location"] == reverse("activity")
    assert stored_zone(world.alice_user) == "America/New_York"
    assert shown_zone(alice_client) == "America/New_York"
    # another session (another process would read the same row): the same zone
    assert shown_zone(login(world.alice_user)) == "America/New_York"
    assert shown_zone(login(world.adam_user)) == "UTC"  # someone else's choice is theirs
    # the row is read on each request, not kept: a change written by anyone shows at once
    with connect() as conn:
        conn.execute("UPDATE person_preferences SET time_zone = 'Asia/Tokyo' WHERE user_id = %s", [world.alice_user.pk])
    assert shown_zone(alice_client) == "Asia/Tokyo"
    choose(alice_client, "utc")
    assert stored_zone(world.alice_user) == "UTC" and shown_zone(alice_client) == "UTC"


def test_a_read_only_viewer_sets_their_own_zone(world, vera_client):
    assert choose(vera_client, "named", "Europe/Paris").status_code == 302
    assert stored_zone(world.vera_user) == "Europe/Paris"


@override_settings(BOARD_DEFAULT_TIME_ZONE="Europe/Paris")
def test_people_who_never_chose_get_the_default(world, alice_client):
    assert shown_zone(alice_client) == "Europe/Paris"
    choose(alice_client, "utc")
    assert shown_zone(alice_client) == "UTC"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"zone_kind": "named", "named_zone": "Mars/X"}, "named_zone: &#x27;Mars/X&#x27; is not a time zone"),
        ({"zone_kind": "named", "named_zone": ""}, "named_zone: is required"),
        ({"zone_kind": "lunar"}, "zone_kind: choose UTC, your browser&#x27;s zone, or a named zone"),
        ({"zone_kind": "browser", "browser_zone": "Nowhere/Land"}, "browser_zone: your browser reported"),
    ],
)
def test_a_bad_choice_is_refused_clearly_and_nothing_is_written(world, alice_client, data, message):
    choose(alice_client, "named", "Asia/Tokyo")
    page = alice_client.post(reverse("time_zone"), {"next": reverse("activity"), **data}, follow=True)
    body = page.content.decode()
    assert page.status_code == 200 and "Time zone not changed: " + message in body
    assert stored_zone(world.alice_user) == "Asia/Tokyo"


def test_the_store_refuses_a_bad_zone_and_an_unknown_person(world):
    with pytest.raises(Invalid, match="time_zone: 'Europe/Atlantis' is not a time zone"):
        preferences.set_time_zone(user_id=world.alice_user.pk, time_zone="Europe/Atlantis")
    with pytest.raises(NotFound):
        execute(preferences.set_time_zone(user_id=999_999, time_zone="UTC"))
    assert stored_zone(world.alice_user) is None


def test_the_browsers_zone_comes_from_the_browser(world, alice_client):
    response = choose(alice_client, "browser", browser="Asia/Tokyo")
    assert response.cookies[clock.BROWSER_COOKIE].value == "Asia/Tokyo"
    assert stored_zone(world.alice_user) == "browser"
    assert shown_zone(alice_client) == "Asia/Tokyo"
    alice_client.cookies[clock.BROWSER_COOKIE] = "America/New_York"  # the laptop travelled
    assert shown_zone(alice_client) == "America/New_York"
    # a browser that has not said its zone yet: UTC, and the switch says why
    fresh = login(world.alice_user)
    body = fresh.get(reverse("overview")).content.decode()
    assert 'data-time-zone="UTC"' in body and "your browser has not told the Board its zone yet" in body


# ---- every time on the pages, and the fragments live updates fetch --------------------------


def test_pages_and_live_fragments_render_times_in_each_viewers_zone(world, alice_client):
    t = make(world, "pending", title="zoned")
    execute_priority = alice_client.post(reverse("todo_priority", args=[t.id]), {"priority": "5"}, **htmx())
    assert execute_priority.status_code == 200  # an audited action: the drawer and Activity list its time
    choose(alice_client, "named", "America/New_York")
    adam = login(world.adam_user)
    for name, args in (("activity", []), ("todo_drawer", [t.id])):
        mine = alice_client.get(reverse(name, args=args), **htmx()).content.decode()
        theirs = adam.get(reverse(name, args=args), **htmx()).content.decode()
        assert NY_TIME.search(mine) and not UTC_TIME.search(mine), name
        assert UTC_TIME.search(theirs) and not NY_TIME.search(theirs), name


def test_the_lease_toast_says_the_time_in_the_viewers_zone(world, alice_client):
    choose(alice_client, "named", "Asia/Tokyo")
    t = make(world, "mine")
    response = alice_client.post(reverse("todo_extend", args=[t.id]), {"lease_minutes": "120"}, **htmx())
    assert response.status_code == 200
    with connect() as conn:
        expires = conn.execute("SELECT lease_expires_at FROM todos WHERE id = %s", (t.id,)).fetchone()
    toast = json.loads(response["HX-Trigger"])["board:toast"]["items"][0]["message"]
    assert f"it now expires at {expires['lease_expires_at'].astimezone(ZoneInfo('Asia/Tokyo')):%H:%M:%S} JST" in toast


# ---- inputs read in the viewer's zone -------------------------------------------------------


def test_reschedule_reads_the_run_at_field_in_the_viewers_zone(world, alice_client):
    choose(alice_client, "named", "America/New_York")
    t = make(world, "pending")
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert 'Run at <span class="muted">(America/New_York; empty: now)</span>' in drawer
    when = (datetime.now(NEW_YORK) + timedelta(days=2)).replace(hour=9, minute=30, second=0, microsecond=0)
    response = alice_client.post(
        reverse("todo_reschedule", args=[t.id]),
        {"fragment": "drawer", "run_at": when.strftime("%Y-%m-%dT%H:%M")},
        **htmx(),
    )
    assert response.status_code == 200
    with connect() as conn:
        stored = conn.execute("SELECT next_retry_at FROM todos WHERE id = %s", (t.id,)).fetchone()["next_retry_at"]
    assert stored == when.astimezone(UTC)
    # the field shows it back in New York's time
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert f'value="{when:%Y-%m-%dT%H:%M:%S}"' in drawer


def test_reschedule_refuses_a_time_the_clocks_skip_and_writes_nothing(world, alice_client):
    choose(alice_client, "named", "America/New_York")
    t = make(world, "pending")
    gap = next_new_york_change(3, 2)
    response = alice_client.post(
        reverse("todo_reschedule", args=[t.id]),
        {"fragment": "drawer", "run_at": f"{gap:%Y-%m-%d}T02:30"},
        **htmx(),
    )
    assert response.status_code == 422
    assert f"run_at: {gap:%Y-%m-%d} 02:30 does not exist in America/New_York" in response.content.decode()
    with connect() as conn:
        row = conn.execute("SELECT next_retry_at FROM todos WHERE id = %s", (t.id,)).fetchone()
    assert row["next_retry_at"] is None


def test_an_endpoints_expiry_is_read_in_the_viewers_zone(world):
    adam = login(world.adam_user)
    choose(adam, "named", "America/New_York")
    form = adam.get(reverse("endpoint_vend"), {"team": "acme"}).content.decode()
    assert "Expires at (America/New_York)" in form
    assert vend(adam, slug="ny-expiry", lifetime="custom", expires_at="2099-03-04T05:06").status_code == 200
    assert endpoint("ny-expiry")["expires_at"] == datetime(2099, 3, 4, 10, 6, tzinfo=UTC)
    refused = vend(adam, slug="ny-gap", lifetime="custom", expires_at="2099-03-08T02:30")
    assert "expires_at: 2099-03-08 02:30 does not exist in America/New_York" in refused.content.decode()
    assert endpoint("ny-gap") is None


def test_the_charts_label_their_intervals_in_the_viewers_zone(world, alice_client):
    choose(alice_client, "named", "Asia/Kolkata")
    body = alice_client.get(reverse("charts")).content.decode()
    assert re.search(r"<title>\d\d:\d\d IST: 0 completed, 0 failed, 0 died</title>", body)
    assert re.search(r'<th scope="row">\d\d:\d\d IST</th>', body)
    assert ":00 UTC" not in body


def test_a_zone_the_server_does_not_know_is_not_used_but_is_acknowledged(world, alice_client):
    """The page says what the browser sent, so board.js does not reload it again and again."""
    choose(alice_client, "browser", browser="Asia/Tokyo")
    alice_client.cookies[clock.BROWSER_COOKIE] = "Moon/Tranquility"
    body = alice_client.get(reverse("overview")).content.decode()
    assert 'data-time-zone="UTC"' in body and 'data-browser-zone-seen="Moon/Tranquility"' in body
    assert "your browser&#x27;s zone &#x27;Moon/Tranquility&#x27; is not one the Board knows: times are in UTC" in body


def test_only_a_page_a_get_rendered_may_be_reloaded_for_the_browsers_zone(world):
    """A page answering a form (a new endpoint's token, shown once) is never loaded again."""
    adam = login(world.adam_user)
    choose(adam, "browser", browser="Asia/Tokyo")
    assert "data-zone-reloadable" in adam.get(reverse("overview")).content.decode()
    revealed = vend(adam, slug="shown-once")
    assert revealed.status_code == 200 and "data-zone-reloadable" not in revealed.content.decode()


def test_a_new_schedule_fires_in_the_viewers_zone_unless_changed(world, alice_client):
    def form_zone(client) -> str:
        body = client.get(reverse("schedules")).content.decode()
        match = re.search(r'<input[^>]*id="sch-tz"[^>]*>', body)
        assert match, "no time zone field on the new schedule form"
        value = re.search(r'value="([^"]*)"', match.group(0))
        return value.group(1) if value else ""

    assert form_zone(alice_client) == "UTC"  # nobody chose: BOARD_DEFAULT_TIME_ZONE
    choose(alice_client, "named", "Europe/Paris")
    assert form_zone(alice_client) == "Europe/Paris"
    choose(alice_client, "browser")
    alice_client.cookies[clock.BROWSER_COOKIE] = "Asia/Tokyo"  # what board.js reports
    assert form_zone(alice_client) == "Asia/Tokyo"
    assert form_zone(login(world.adam_user)) == "UTC"  # someone else's choice is theirs

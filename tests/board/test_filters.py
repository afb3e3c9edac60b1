"""The todo list's filters beyond state, queue and endpoint: kind, priority, the created and
finished days, a dead-letter reason group, and the search through what attempts said. Each valid
value narrows the list, its tabs' counts and "all matching" alike; each bad value is named on the
page and not applied."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import pytest
from django.test import RequestFactory
from django.urls import reverse

from tests.factories import relayed
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.filters import TodoFilter
from todos.core.selectors import bulk_targets, todo_counts
from todos.core.selectors.access import viewer_for
from todos.core.store import agent as agent_store
from todos.dashboard.views.todo_filter import filter_zone

pytestmark = pytest.mark.usefixtures("store_db")


def ids_in(body: str) -> list[str]:
    return re.findall(r'<tr id="todo-(td_[0-9a-f]+)"', body)


def listed(client, **params) -> tuple[list[str], str]:
    response = client.get(reverse("todo_list"), params)
    assert response.status_code == 200
    body = response.content.decode()
    return ids_in(body), body


def set_times(todo_id: str, *, created: str | None = None, finished: str | None = None) -> None:
    with connect() as conn:
        if created:
            conn.execute("UPDATE todos SET created_at = %s WHERE id = %s", (created, todo_id))
        if finished:
            # a todo finishes after it is created (the finished filter relies on it)
            conn.execute(
                """UPDATE todos SET completed_at = %(at)s,
                       created_at = least(created_at, %(at)s::timestamptz - interval '1 minute')
                   WHERE id = %(id)s""",
                {"at": finished, "id": todo_id},
            )


def dead_with(world, summary: str, *, agent=None, title: str = "dead"):
    agent = agent or world.agent
    todo = execute(agent_store.create(agent, queue="default", title=title, max_attempts=1)).todo
    execute(agent_store.claim(agent, todo.id))
    return execute(agent_store.fail(agent, todo.id, summary=summary))


# --- each valid value ----------------------------------------------------------------------------


def test_kind_keeps_that_kind_only(world, alice_client):
    report = make(world, "pending", kind="report")
    other = make(world, "pending", kind="resize")
    plain = make(world, "pending")
    ids, _ = listed(alice_client, kind="report")
    assert ids == [report.id]
    assert other.id not in ids and plain.id not in ids


def test_priority_one_value_and_a_range(world, alice_client):
    low = make(world, "pending", priority=-5)
    mid = make(world, "pending", priority=5)
    high = make(world, "pending", priority=20)
    assert listed(alice_client, priority="5")[0] == [mid.id]
    assert set(listed(alice_client, priority="0..10")[0]) == {mid.id}
    assert set(listed(alice_client, priority="-5..20")[0]) == {low.id, mid.id, high.id}
    assert set(listed(alice_client, priority="-10..0")[0]) == {low.id}


def test_created_days_include_both_ends_in_utc(world, alice_client):
    before = make(world, "pending", title="before")
    first = make(world, "pending", title="first")
    last = make(world, "pending", title="last")
    after = make(world, "pending", title="after")
    set_times(before.id, created="2026-03-09T23:59:59.999Z")
    set_times(first.id, created="2026-03-10T00:00:00Z")
    set_times(last.id, created="2026-03-12T23:59:59.999Z")
    set_times(after.id, created="2026-03-13T00:00:00Z")
    ids, _ = listed(alice_client, created_from="2026-03-10", created_to="2026-03-12")
    assert set(ids) == {first.id, last.id}
    assert set(listed(alice_client, created_from="2026-03-13")[0]) == {after.id}
    assert set(listed(alice_client, created_to="2026-03-09")[0]) == {before.id}


def test_finished_days_keep_todos_finished_then(world, alice_client):
    done_then = make(world, "done")
    done_later = make(world, "done")
    pending = make(world, "pending")
    set_times(done_then.id, finished="2026-05-02T12:00:00Z")
    set_times(done_later.id, finished="2026-05-04T00:00:00Z")
    ids, _ = listed(alice_client, finished_from="2026-05-01", finished_to="2026-05-03")
    assert ids == [done_then.id]
    assert pending.id not in listed(alice_client, finished_from="2026-01-01")[0]


def test_failed_with_keeps_one_reason_group(world, alice_client):
    a = dead_with(world, "timeout after 30s on 10.0.0.7")
    b = dead_with(world, "timeout after 45s on 10.0.0.9")
    c = dead_with(world, "HTTP 503 from upstream")
    ids, _ = listed(alice_client, failed_with="timeout after #s on #.#.#.#")
    assert set(ids) == {a.id, b.id}
    assert c.id not in ids


def test_the_dead_letters_page_links_each_group_to_the_list(world, alice_client):
    a = dead_with(world, "timeout after 30s on 10.0.0.7")
    c = dead_with(world, "HTTP 503 from upstream")
    page = alice_client.get(reverse("dead_letter_groups")).content.decode()
    links = re.findall(r'<a class="in-list" href="([^"]+)"', page)
    assert len(links) == 2
    timeout = next(link for link in links if "timeout" in unquote(link))
    assert "state=dead" in timeout
    ids = ids_in(alice_client.get(timeout.replace("&amp;", "&")).content.decode())
    assert ids == [a.id] and c.id not in ids


def test_filters_stay_in_the_url_and_in_every_link(world, alice_client):
    make(world, "pending", kind="report", priority=3)
    _, body = listed(alice_client, kind="report", priority="0..10", created_from="2026-01-01")
    expected = "kind=report&amp;priority=0..10&amp;created_from=2026-01-01"
    assert f'data-live-filter="{expected}"' in body
    assert f'href="/todos/export.csv?{expected}"' in body
    assert 'value="0..10"' in body and 'value="report"' in body and 'value="2026-01-01"' in body
    # the state tabs keep the other filters
    assert re.search(r'href="/todos/\?state=pending&amp;kind=report&amp;priority=0..10', body)


def test_counts_follow_the_filters(world, alice_client):
    make(world, "pending", kind="report")
    make(world, "pending", kind="report")
    make(world, "done", kind="report")
    make(world, "pending", kind="other")
    viewer = viewer_for(world.alice_user)
    counts = todo_counts.state_counts(viewer, TodoFilter(kind="report"))
    assert counts["all"].value == 3 and counts["pending"].value == 2 and counts["done"].value == 1
    relayed()  # the unfiltered tabs are the relay's counts
    unfiltered = todo_counts.state_counts(viewer, TodoFilter())
    assert unfiltered["all"].value == 4


def test_all_matching_acts_on_exactly_what_the_list_shows(world, alice_client):
    ours = [make(world, "pending", kind="report") for _ in range(3)]
    make(world, "pending", kind="other")
    viewer = viewer_for(world.alice_user)
    f = TodoFilter(kind="report")
    assert bulk_targets.count_matching(viewer, f, "cancel", cap=100).value == 3
    chunks = list(bulk_targets.iter_matching_ids(viewer, f, "cancel", limit=100))
    assert sorted(i for chunk in chunks for i in chunk) == sorted(t.id for t in ours)
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:matching", "kind": "report"})
    assert preview.status_code == 200
    assert "3 todos can be canceled" in preview.content.decode()
    assert "kind “report”" in preview.content.decode()


# --- each bad value --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"priority": "high"}, "priority: must be a whole number such as 5, or a range such as 0..10"),
        ({"priority": "10..0"}, "priority: the range 10..0 is empty: write the lower number first"),
        ({"priority": "99999"}, "priority: must be from -32768 to 32767"),
        ({"priority": "1..2..3"}, "priority: must be a whole number"),
        ({"created_from": "2026-13-01"}, "created_from: must be a day written YYYY-MM-DD"),
        ({"created_to": "yesterday"}, "created_to: must be a day written YYYY-MM-DD"),
        ({"finished_from": "2026-02-30"}, "finished_from: must be a day written YYYY-MM-DD"),
        ({"finished_to": "3 May"}, "finished_to: must be a day written YYYY-MM-DD"),
        (
            {"created_from": "2026-05-02", "created_to": "2026-05-01"},
            "created_from: 2026-05-02 is after created_to 2026-05-01",
        ),
        (
            {"finished_from": "2026-05-02", "finished_to": "2026-05-01"},
            "finished_from: 2026-05-02 is after finished_to 2026-05-01",
        ),
        ({"kind": "k" * 129}, "kind: must be at most 128 characters"),
        ({"failed_with": "x" * 301}, "failed_with: must be a failure reason of at most 300 characters"),
    ],
)
def test_a_bad_value_is_named_and_not_applied(world, alice_client, params, message):
    a = make(world, "pending", kind="report", priority=1)
    b = make(world, "done")
    response = alice_client.get(reverse("todo_list"), params)
    assert response.status_code == 200
    body = response.content.decode()
    assert message in body.replace("&#x27;", "'")
    assert set(ids_in(body)) == {a.id, b.id}  # the bad filter is dropped, not half-applied
    # the export refuses it rather than exporting a wider set than asked for
    export = alice_client.get(reverse("todo_export"), params)
    assert export.status_code == 400
    assert message.split(":")[0] in export.content.decode()
    # and a bulk action over "all matching" will not run on a misread filter
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:matching", **params})
    assert preview.status_code == 400


def test_days_are_read_in_the_filters_zone():
    request = RequestFactory().get("/todos/")
    assert filter_zone(request) == ZoneInfo("UTC")
    f = TodoFilter.from_query({"created_from": "2026-03-10", "created_to": "2026-03-10"})
    assert f.day_bounds("created") == (datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 11, tzinfo=UTC))
    paris = TodoFilter.from_query({"created_from": "2026-03-10"}, zone=ZoneInfo("Europe/Paris"))
    start, end = paris.day_bounds("created")
    assert start == datetime(2026, 3, 9, 23, tzinfo=UTC) and end is None
    assert paris.created_from == date(2026, 3, 10)


# --- search: what the attempts said -----------------------------------------------------------------


def test_search_finds_a_phrase_of_an_attempt_summary(world, alice_client):
    hit = dead_with(world, "Upstream said: quota exceeded for tenant 42", title="nothing to see")
    miss = dead_with(world, "exceeded the quota", title="neither here")
    ids, body = listed(alice_client, q="quota exceeded")
    assert ids == [hit.id]
    assert miss.id not in ids
    # a phrase is its words in order, next to each other
    assert listed(alice_client, q="exceeded the quota")[0] == [miss.id]
    assert listed(alice_client, q="quota tenant")[0] == []


def test_search_by_attempt_text_does_not_reach_another_team(world, bob_client, alice_client):
    ours = dead_with(world, "disk full on builder", title="ours")
    theirs = dead_with(world, "disk full on builder", agent=world.globex_agent, title="theirs")
    assert listed(bob_client, q="disk full")[0] == [theirs.id]
    assert listed(alice_client, q="disk full")[0] == [ours.id]


def test_search_by_attempt_text_is_counted_in_the_tabs(world, alice_client):
    dead_with(world, "certificate expired yesterday")
    dead_with(world, "certificate expired today")
    make(world, "pending", title="certificate renewal")
    viewer = viewer_for(world.alice_user)
    counts = todo_counts.state_counts(viewer, TodoFilter(q="certificate expired"))
    assert counts["dead"].value == 2 and counts["pending"].value == 0


# --- what joins the filters to the rest of the Board ---------------------------------------------


def failed_with_error(world, error: dict, *, title: str = "dead"):
    todo = execute(agent_store.create(world.agent, queue="default", title=title, max_attempts=1)).todo
    execute(agent_store.claim(world.agent, todo.id))
    return execute(agent_store.fail(world.agent, todo.id, error=error))


def test_search_finds_an_error_by_its_type_and_its_message(world, alice_client):
    disk = failed_with_error(
        world,
        {
            "type": "psycopg.errors.DiskFull",
            "message": "could not extend file base/16384/2619",
            "traceback": "deep frame",
        },
    )
    other = failed_with_error(world, {"type": "TimeoutError", "message": "no answer in 30 s"})
    assert listed(alice_client, q="psycopg.errors.DiskFull")[0] == [disk.id]
    assert listed(alice_client, q="DiskFull")[0] == [disk.id]  # the dotted name's last word
    assert listed(alice_client, q="could not extend file")[0] == [disk.id]
    assert listed(alice_client, q="no answer")[0] == [other.id]
    assert listed(alice_client, q="deep frame")[0] == []  # tracebacks are shown, not searched


def test_day_ranges_are_days_of_the_persons_chosen_zone(world, alice_client):
    from todos.core.store import preferences

    late = make(world, "pending", title="late evening in New York")
    set_times(late.id, created="2026-03-11T03:30:00Z")  # 23:30 on the 10th in New York
    assert listed(alice_client, created_from="2026-03-10", created_to="2026-03-10")[0] == []  # UTC: the 11th
    execute(preferences.set_time_zone(user_id=world.alice_user.pk, time_zone="America/New_York"))
    assert listed(alice_client, created_from="2026-03-10", created_to="2026-03-10")[0] == [late.id]


def test_a_bulk_job_reads_its_days_in_the_zone_the_person_saw(world, alice_client):
    from todos.core.store import preferences
    from todos.ops import bulk

    execute(preferences.set_time_zone(user_id=world.alice_user.pk, time_zone="America/New_York"))
    late = make(world, "pending", title="late evening in New York")
    set_times(late.id, created="2026-03-11T03:30:00Z")
    response = alice_client.post(
        reverse("bulk_start"),
        {"action": "cancel", "scope": "matching", "created_from": "2026-03-10", "created_to": "2026-03-10"},
    )
    assert response.status_code in (200, 302)
    with connect() as conn:
        stored = conn.execute("SELECT filter FROM bulk_jobs ORDER BY created_at DESC LIMIT 1").fetchone()["filter"]
    assert stored["zone"] == "America/New_York"
    f = bulk.job_filter(stored)
    assert f.day_bounds("created")[0] == datetime(2026, 3, 10, 4, tzinfo=UTC)  # EDT since March 8
    # a filter with no days keeps no zone: its stored form is what it was
    assert "zone" not in bulk.job_filter({"kind": "report"}).params()


# --- filters and a search together; statements planned for their values ---------------------------


def test_a_search_under_kind_and_priority_lists_exactly_the_todos_matching_both(world, alice_client, bob_client):
    def failed_as(kind: str, priority: int, summary: str, *, agent=None):
        agent = agent or world.agent
        todo = execute(
            agent_store.create(agent, queue="default", title="t", kind=kind, priority=priority, max_attempts=1)
        ).todo
        execute(agent_store.claim(agent, todo.id))
        return execute(agent_store.fail(agent, todo.id, summary=summary))

    both = failed_as("deploy", 3, "disk full on the builder")
    other_kind = failed_as("build", 3, "disk full on the builder")
    other_priority = failed_as("deploy", 9, "disk full on the builder")
    other_words = failed_as("deploy", 3, "network unreachable")
    theirs = failed_as("deploy", 3, "disk full on the builder", agent=world.globex_agent)
    params = {"q": "disk full", "kind": "deploy", "priority": "0..5"}
    ids, _ = listed(alice_client, **params)
    assert ids == [both.id]
    assert not {other_kind.id, other_priority.id, other_words.id, theirs.id} & set(ids)
    assert listed(bob_client, **params)[0] == [theirs.id]
    # the tabs count the same matches
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter.from_query(params))
    assert counts["dead"].value == 1 and counts["all"].value == 1
    # and a week of creation around them keeps them, a week before drops them
    today = datetime.now(UTC).date().isoformat()
    assert listed(alice_client, **params, created_from=today, created_to=today)[0] == [both.id]
    assert listed(alice_client, **params, created_from="2020-01-01", created_to="2020-01-07")[0] == []


def test_a_finished_range_is_planned_for_its_values_and_other_filters_are_prepared(world, monkeypatch):
    from contextlib import contextmanager

    from todos.core.selectors import todo_list

    done = make(world, "done")
    with connect(prepare_threshold=0) as conn:  # prepares every statement it may

        @contextmanager
        def this_connection():
            yield conn

        monkeypatch.setattr(todo_list, "read_connection", this_connection)
        monkeypatch.setattr(todo_counts, "read_connection", this_connection)
        viewer = viewer_for(world.alice_user)
        today = datetime.now(UTC).date()
        finished = TodoFilter(finished_from=today, finished_to=today)
        assert [r.id for r in todo_list.list_page(viewer, finished).rows] == [done.id]
        todo_counts.state_counts(viewer, finished)
        prepared = conn.execute("SELECT statement FROM pg_prepared_statements", prepare=False).fetchall()
        assert prepared == []  # a generic plan would read the whole day
        todo_list.list_page(viewer, TodoFilter(kind="deploy"))
        prepared = conn.execute("SELECT statement FROM pg_prepared_statements", prepare=False).fetchall()
        assert len(prepared) == 1 and "t.kind = $" in prepared[0]["statement"]


@pytest.mark.parametrize("window", [1_000, 3])
def test_a_search_pages_own_tab_counts_are_the_tabs_counts(world, monkeypatch, window):
    from todos.core.selectors import todo_list

    monkeypatch.setattr(todo_list, "SEARCH_SCAN_ROWS", window)
    dead_with(world, "disk full on builder one")
    dead_with(world, "disk full on builder two")
    make(world, "pending", title="disk full, the title says")
    make(world, "done", title="nothing here")
    dead_with(world, "disk full elsewhere", agent=world.globex_agent)
    viewer = viewer_for(world.alice_user)
    for f in (TodoFilter(q="disk full"), TodoFilter(q="no such words"), TodoFilter(q="disk full", kind="none")):
        page = todo_list.list_page(viewer, f)
        assert page.tab_counts is not None
        counted = todo_counts.state_counts(viewer, f)
        assert {k: str(v) for k, v in page.tab_counts.items()} == {k: str(v) for k, v in counted.items()}
    if window == 1_000:
        counts = todo_list.list_page(viewer, TodoFilter(q="disk full")).tab_counts
        assert counts is not None and str(counts["all"]) == "3" and str(counts["dead"]) == "2"
    # a page whose window is not the tabs' window leaves them to their own statement
    assert todo_list.list_page(viewer, TodoFilter(q="disk full", state="dead")).tab_counts is None
    assert todo_list.list_page(viewer, TodoFilter(q="disk full", sort="oldest")).tab_counts is None

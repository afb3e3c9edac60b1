"""The todo list: filters in the URL, keyset pages, per-state counts, search, live inserts."""

from __future__ import annotations

import re
from datetime import UTC

import pytest
from django.urls import reverse

from tests.board.test_bulk import insert_dead_letters
from tests.factories import relayed
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.filters import Cursor, PriorityRange, TodoFilter
from todos.core.selectors import todo_counts, todo_list
from todos.core.selectors.access import viewer_for
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")


def ids_in(body: str) -> list[str]:
    return re.findall(r'<tr id="todo-(td_[0-9a-f]+)"', body)


def spread(n: int) -> list:
    """n pending todos with distinct, known creation times (newest last)."""
    todos = [
        execute(agent_store.create(worldless_agent[0], queue="default", title=f"item {i:03d}")).todo for i in range(n)
    ]
    with connect() as conn:
        for i, t in enumerate(todos):
            conn.execute(
                "UPDATE todos SET created_at = now() - make_interval(secs => %s) WHERE id = %s", (1000 - i, t.id)
            )
    return todos


worldless_agent: list = []


@pytest.fixture
def agent(world):
    worldless_agent[:] = [world.agent]
    return world.agent


def test_keyset_pages_walk_the_whole_set_without_gaps(world, agent, alice_client):
    todos = spread(120)
    seen: list[str] = []
    url = reverse("todo_list") + "?state=pending"
    pages = 0
    while url:
        body = alice_client.get(url).content.decode()
        page_ids = ids_in(body)
        seen += page_ids
        pages += 1
        match = re.search(r'rel="next" href="([^"]+)"', body)
        url = match.group(1).replace("&amp;", "&") if match else None
        assert "offset" not in (url or "")
    assert pages == 3
    assert seen == [t.id for t in reversed(todos)]  # newest first, each exactly once
    # back: "previous" from page 2 returns page 1
    page1 = alice_client.get(reverse("todo_list") + "?state=pending").content.decode()
    next_url = re.search(r'rel="next" href="([^"]+)"', page1).group(1).replace("&amp;", "&")
    page2 = alice_client.get(next_url).content.decode()
    prev_url = re.search(r'rel="prev" href="([^"]+)"', page2).group(1).replace("&amp;", "&")
    assert ids_in(alice_client.get(prev_url).content.decode()) == ids_in(page1)


def test_oldest_and_priority_orders(world, agent, alice_client):
    todos = spread(5)
    execute(human_store.set_priority(world.alice, todos[3].id, -10))
    oldest = ids_in(alice_client.get(reverse("todo_list") + "?sort=oldest").content.decode())
    assert oldest == [t.id for t in todos]
    by_priority = ids_in(alice_client.get(reverse("todo_list") + "?sort=priority").content.decode())
    assert by_priority[0] == todos[3].id and by_priority[1:] == [t.id for t in todos if t.id != todos[3].id]
    # a priority page cursor carries the priority
    viewer = viewer_for(world.alice_user)
    page = todo_list.list_page(viewer, TodoFilter(sort="priority"), page_size=2)
    assert page.next_cursor.priority == 0 and page.next_cursor.encode().startswith("0~")
    rest = todo_list.list_page(viewer, TodoFilter(sort="priority", after=page.next_cursor), page_size=10)
    assert [r.id for r in page.rows + rest.rows] == by_priority


def test_cursor_keeps_full_precision():
    from datetime import datetime

    c = Cursor(datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), "td_abc")
    assert Cursor.decode(c.encode(), with_priority=False) == c


def test_filters_state_queue_endpoint_team_mine(world, agent, alice_client):
    make(world, "pending", title="email one", queue="email")
    default = make(world, "pending", title="default one")
    mine = make(world, "mine", title="held by alice")
    assigned = make(world, "pending", title="assigned to alice")
    execute(human_store.assign(world.alice, assigned.id, f"human:{world.alice_user.id}"))
    dead = make(world, "dead", title="a dead one")
    retry = make(world, "retry", title="a retry one")
    get = lambda q: ids_in(alice_client.get(reverse("todo_list") + q).content.decode())  # noqa: E731
    assert default.id in get("?queue=default") and all(i != default.id for i in get("?queue=email"))
    assert get("?state=dead") == [dead.id]
    assert get("?state=retry") == [retry.id]
    assert set(get("?mine=1")) == {mine.id, assigned.id}
    assert len(get("?endpoint=acme-worker")) == 6 and len(get("?team=acme")) == 6
    assert get("?state=dead&queue=email") == []
    assert len(get("?queue=default")) == 5  # state "all" with a queue: one branch per state


def test_counts_per_state_are_the_relays_exact_counts(world, agent, alice_client):
    for state in ("pending", "pending", "claimed", "retry", "dead", "done", "canceled"):
        make(world, state)
    relayed()
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter())
    assert {k: str(v) for k, v in counts.items()} == {
        "pending": "2",
        "blocked": "0",
        "scheduled": "0",
        "claimed": "1",
        "retry": "1",
        "dead": "1",
        "done": "1",
        "canceled": "1",
        "all": "7",
    }
    assert not any(c.capped for c in counts.values())
    # filtered by queue, team and endpoint: still the counts
    make(world, "pending", queue="email")
    relayed()
    assert str(todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(queue="email"))["pending"]) == "1"
    assert str(todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(team="acme"))["pending"]) == "3"
    assert str(todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(endpoint="acme-worker"))["all"]) == "8"
    body = alice_client.get(reverse("todo_list")).content.decode()
    assert 'data-count="all">8<' in body and 'data-count="pending">3<' in body
    assert "counts leave the search out" not in body


def test_counts_are_exact_past_the_old_cap(world, alice_client):
    insert_dead_letters(world.acme_ep.id, 1_500)
    make(world, "dead")
    relayed()
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter())
    assert str(counts["dead"]) == "1,501" and str(counts["all"]) == "1,501" and str(counts["canceled"]) == "0"
    assert 'data-count="dead">1,501<' in alice_client.get(reverse("todo_list")).content.decode()
    assert str(todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(queue="email"))["dead"]) == "0"


def test_assigned_to_me_counts_rows_up_to_the_cap_and_says_so(world, agent, alice_client, monkeypatch):
    """The counts cannot answer "assigned to me": those tabs count the rows, capped, and say so."""
    for _ in range(4):
        todo = make(world, "pending")
        execute(human_store.assign(world.alice, todo.id, world.alice.owner))
    make(world, "pending")  # not assigned: not counted under the filter
    monkeypatch.setattr(todo_counts, "COUNT_CAP", 3)
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(mine=True))
    assert str(counts["all"]) == "3+" and counts["all"].capped and str(counts["done"]) == "0"
    body = alice_client.get(reverse("todo_list"), {"mine": "1", "q": "x"}).content.decode()
    assert "Counts are of the search" in body  # the tabs count the search
    body = alice_client.get(reverse("todo_list"), {"mine": "1"}).content.decode()
    assert "counted up to 1,000 per state" in body


def test_search_text_id_and_payload(world, agent, alice_client):
    a = execute(
        agent_store.create(
            agent,
            queue="default",
            title="Invoice 42 for ACME",
            kind="billing",
            payload={"customer": {"id": 7}, "note": "urgent"},
        )
    ).todo
    b = execute(
        agent_store.create(
            agent,
            queue="default",
            title="Reminder",
            source="crm-sync",
            idempotency_key="order-991",
            payload={"customer": {"id": "8"}, "password": "p4ss"},
        )
    ).todo
    get = lambda q: ids_in(alice_client.get(reverse("todo_list"), {"q": q}).content.decode())  # noqa: E731
    assert get("invoice") == [a.id]
    assert get("billing") == [a.id]
    assert get("crm-sync") == [b.id]
    assert get("order-991") == [b.id]
    assert get("urgent") == [a.id]  # text inside the payload
    assert get(a.id) == [a.id]  # a whole id
    assert get(a.id[:10]) == [a.id]  # a short id (prefix)
    assert get("customer.id=7") == [a.id]
    assert get("customer.id=8") == [b.id]  # "8" matches the string as well as the number
    assert get("customer.id=9") == []
    assert get("password=p4ss") == []  # a masked key is not a search oracle for its value… as JSON
    assert get("50%_off") == []  # LIKE metacharacters are literal


def test_search_is_a_bounded_scan_that_continues(world, agent, alice_client, monkeypatch):
    target = execute(agent_store.create(agent, queue="default", title="needle")).todo
    spread(30)
    with connect() as conn:  # the needle is older than the 30 others
        conn.execute("UPDATE todos SET created_at = now() - interval '1 hour' WHERE id = %s", (target.id,))
    monkeypatch.setattr(todo_list, "SEARCH_SCAN_ROWS", 10)
    body = alice_client.get(reverse("todo_list"), {"q": "needle"}).content.decode()
    assert ids_in(body) == [] and "stopped" in body
    found = []
    url = reverse("todo_list") + "?q=needle"
    for _ in range(10):
        body = alice_client.get(url).content.decode()
        found += ids_in(body)
        match = re.search(r'rel="next" href="([^"]+)"', body)
        if not match:
            break
        url = match.group(1).replace("&amp;", "&")
    assert found == [target.id]


def test_rows_fragment_newer_than(world, agent, alice_client):
    first = spread(3)
    body = alice_client.get(reverse("todo_list"), {"fragment": "rows"}).content.decode()
    cursor = re.search(r'data-newest-cursor="([^"]+)"', body).group(1)
    assert cursor.endswith(first[-1].id)
    new_default = make(world, "pending", title="fresh")
    make(world, "pending", title="fresh in email", queue="email")
    newer = alice_client.get(
        reverse("todo_list"), {"fragment": "rows", "newer_than": cursor, "queue": "default"}
    ).content.decode()
    assert ids_in(newer) == [new_default.id]
    assert 'data-newest-cursor="' in newer and new_default.id in re.search(
        r'data-newest-cursor="([^"]+)"', newer
    ).group(1)
    assert "No todos match" not in newer
    bad = alice_client.get(reverse("todo_list"), {"fragment": "rows", "newer_than": "garbage"})
    assert bad.status_code == 400 and b"newer_than: not a row cursor" in bad.content


def test_bad_filter_values_are_named_not_fatal(world, agent, alice_client):
    make(world, "pending")
    body = alice_client.get(
        reverse("todo_list"), {"state": "exploded", "sort": "random", "after": "nope"}
    ).content.decode()
    assert "state: unknown state &#x27;exploded&#x27;" in body
    assert "sort: unknown order &#x27;random&#x27;" in body
    assert "after: not a page cursor" in body
    assert len(ids_in(body)) == 1


def test_filters_live_in_the_url(world, agent, alice_client):
    body = alice_client.get(reverse("todo_list"), {"state": "dead", "queue": "email"}).content.decode()
    assert 'hx-push-url="true"' in body
    assert 'data-live-filter="state=dead&amp;queue=email"' in body
    assert 'aria-current="true"' in body and 'name="state" value="dead"' in body
    assert '<option value="email" selected>' in body


def test_pending_in_claim_order_across_queues_and_pages(world, agent):
    todos = [
        execute(agent_store.create(agent, queue=("default", "email")[i % 2], title=f"t{i}", priority=(i * 7) % 5)).todo
        for i in range(12)
    ]
    viewer = viewer_for(world.alice_user)
    expected = [t.id for t in sorted(todos, key=lambda t: (t.priority, t.created_at, t.id))]
    seen, cursor = [], None
    while True:
        page = todo_list.list_page(viewer, TodoFilter(state="pending", sort="priority", after=cursor), page_size=5)
        seen += [r.id for r in page.rows]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == expected


def test_mine_is_what_is_assigned_to_me_or_leased_by_me_in_every_state_page_and_count(world, agent, alice_client):
    """``?mine=1`` is driven by the human's own rows (todos_assignee_state_created and the leases
    in flight), not by the endpoints' histories: every state, no duplicates, no other team."""
    me = f"human:{world.alice_user.id}"

    def assigned(title, *, then=(), **kwargs):
        todo = execute(agent_store.create(agent, queue="default", title=title, **kwargs)).todo
        execute(human_store.assign(world.alice, todo.id, me))
        for step in then:
            step(todo.id)
        return todo.id

    claim = lambda tid: execute(human_store.claim(world.alice, tid))  # noqa: E731
    expected = {
        assigned("assigned pending"),
        assigned("assigned and leased by me", then=[claim]),  # both: listed once
        assigned("assigned done", then=[claim, lambda tid: execute(human_store.complete(world.alice, tid))]),
        assigned(
            "assigned dead", then=[claim, lambda tid: execute(human_store.fail(world.alice, tid))], max_attempts=1
        ),
        assigned("assigned canceled", then=[lambda tid: execute(human_store.cancel(world.alice, tid))]),
        make(world, "mine", title="leased by me, assigned to no one").id,
    }
    make(world, "pending", title="nobody's")
    other = execute(agent_store.create(agent, queue="default", title="someone else's")).todo
    execute(human_store.assign(world.alice, other.id, "human:999999"))
    foreign = execute(
        agent_store.create(world.globex_agent, queue="default", title="globex, assigned to alice's id")
    ).todo
    execute(human_store.assign(world.bob, foreign.id, me))

    listed = ids_in(alice_client.get(reverse("todo_list") + "?mine=1").content.decode())
    assert len(listed) == len(set(listed)) and set(listed) == expected

    viewer = viewer_for(world.alice_user)
    walked, f = [], TodoFilter(mine=True)
    while True:
        page = todo_list.list_page(viewer, f, page_size=2)
        walked += [r.id for r in page.rows]
        if page.next_cursor is None:
            break
        f = TodoFilter(mine=True, after=page.next_cursor)
    assert walked == listed  # keyset pages: newest first, each exactly once

    counts = {k: str(v) for k, v in todo_counts.state_counts(viewer, TodoFilter(mine=True)).items()}
    assert counts == {
        "all": "6",
        "pending": "1",
        "blocked": "0",
        "scheduled": "0",
        "claimed": "2",
        "retry": "0",
        "dead": "1",
        "done": "1",
        "canceled": "1",
    }
    leased = ids_in(alice_client.get(reverse("todo_list") + "?mine=1&state=claimed").content.decode())
    assert len(leased) == 2 and set(leased) <= expected


def test_the_retry_list_and_count_use_the_retry_index_and_stay_exact(world, agent, alice_client):
    retry = {make(world, "retry").id for _ in range(3)}
    make(world, "dead")
    make(world, "dead")
    assert set(ids_in(alice_client.get(reverse("todo_list") + "?state=retry").content.decode())) == retry
    relayed()
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter())
    assert str(counts["retry"]) == "3" and str(counts["dead"]) == "2"
    # a retry window of another team is neither listed nor counted
    make(world, "retry", agent=world.globex_agent)
    relayed()
    assert str(todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter())["retry"]) == "3"


def test_filtered_counts_walk_the_filter_once_and_say_when_they_stopped(world, alice_client, monkeypatch):
    """Under a filter on the todos' own columns, the tabs count the first COUNT_CAP + 1 matches
    of the filter: exact below the cap, "1,000+" on All and "n+" on each state past it."""
    for _ in range(2):
        make(world, "pending", kind="deploy")
    make(world, "done", kind="deploy")
    make(world, "dead", kind="deploy")
    make(world, "pending", kind="build")  # not of the filter
    viewer = viewer_for(world.alice_user)
    counts = todo_counts.state_counts(viewer, TodoFilter(kind="deploy"))
    assert {key: str(c) for key, c in counts.items() if c.value} == {
        "all": "4",
        "pending": "2",
        "done": "1",
        "dead": "1",
    }
    assert not any(c.capped or c.at_least for c in counts.values())
    assert str(counts["canceled"]) == "0"

    monkeypatch.setattr(todo_counts, "COUNT_CAP", 3)
    counts = todo_counts.state_counts(viewer, TodoFilter(kind="deploy"))
    assert str(counts["all"]) == "3+" and counts["all"].capped
    assert all(c.at_least for key, c in counts.items() if key != "all")
    assert sum(c.value for key, c in counts.items() if key != "all") == 4  # the walk stopped at cap + 1
    assert all(str(c) == (f"{c.value}+" if c.value else "0") for key, c in counts.items() if key != "all")
    body = alice_client.get(reverse("todo_list"), {"kind": "deploy"}).content.decode()
    assert 'data-count="all">3+<' in body and "Counted over the first 1,000 matches" in body


def test_filtered_counts_of_a_rare_value_are_exact_and_stay_within_the_viewers_teams(world, alice_client):
    make(world, "pending", priority=5)
    make(world, "canceled", priority=5)
    make(world, "pending", priority=4)
    make(world, "pending")
    make(world, "pending", priority=5, agent=world.globex_agent)  # another team's
    counts = todo_counts.state_counts(viewer_for(world.alice_user), TodoFilter(priority=PriorityRange(5, 5)))
    assert (str(counts["all"]), str(counts["pending"]), str(counts["canceled"])) == ("2", "1", "1")
    body = alice_client.get(reverse("todo_list"), {"priority": "5"}).content.decode()
    assert 'data-count="all">2<' in body

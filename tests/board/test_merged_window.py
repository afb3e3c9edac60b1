"""A search's window written as one merge of the endpoints' walks (``scans._merged_scan_sql``):
the same keys, in the same order, as the LATERAL form it replaces, for every shape it serves, and
the LATERAL form kept where the merge does not apply."""

from __future__ import annotations

import dataclasses

import pytest
from django.urls import reverse

from tests import factories
from tests.board.test_list import ids_in
from tests.support.board import make
from todos.core.compose import Params
from todos.core.db import connect
from todos.core.filters import TodoFilter
from todos.core.selectors import scans
from todos.core.selectors.access import viewer_for
from todos.core.selectors.scans import ORDERS, scan_sql
from todos.core.selectors.todo_query import build_query

pytestmark = pytest.mark.usefixtures("store_db")


@pytest.fixture
def three_endpoints(world):
    """Acme with three endpoints, their todos' creation times interleaved (and one tie)."""
    second = factories.agent(factories.endpoint(world.acme, slug="acme-second", queues=("default",)))
    third = factories.agent(factories.endpoint(world.acme, slug="acme-third", queues=("default",)))
    made = []
    for i in range(30):
        agent = (world.agent, second, third)[i % 3]
        made.append(make(world, ("pending", "done", "dead", "claimed")[i % 4], title=f"item {i}", agent=agent))
    with connect() as conn:
        for i, todo in enumerate(made):
            seconds = 1000 - i if i != 7 else 1000 - 8  # item 7 ties item 8: the id breaks it
            moved = "UPDATE todos SET created_at = now() - make_interval(secs => %s) WHERE id = %s"
            conn.execute(moved, (seconds, todo.id))
    return made


def window(world, f: TodoFilter, *, merged: bool, limit: int) -> tuple[str, list[str]]:
    query = build_query(viewer_for(world.alice_user), f)
    columns, direction = ORDERS["newest"]
    params = Params(query.params)
    bound = params.bind("scan", limit)
    select = "t.created_at, t.id"
    sql = scan_sql(query, columns=columns, direction=direction, keyset=None, limit=bound, select=select, merged=merged)
    with connect() as conn:
        return sql, [r["id"] for r in conn.execute(sql, params).fetchall()]


@pytest.mark.parametrize("state", ["all", "pending", "done", "dead", "claimed"])
@pytest.mark.parametrize("limit", [1, 4, 11, 1000])
def test_the_merged_window_holds_the_lateral_windows_keys_in_its_order(world, three_endpoints, state, limit):
    f = TodoFilter(state=state)
    merged_sql, merged = window(world, f, merged=True, limit=limit)
    lateral_sql, lateral = window(world, f, merged=False, limit=limit)
    assert "UNION ALL" in merged_sql and "LATERAL" not in merged_sql
    assert "LATERAL" in lateral_sql
    assert merged == lateral and len(merged) == min(limit, len(lateral)) and merged


def test_queue_pairs_or_several_states_keep_the_lateral_form(world, three_endpoints):
    query = build_query(viewer_for(world.alice_user), TodoFilter(state="pending"))
    assert scans.mergeable(query)
    assert not scans.mergeable(dataclasses.replace(query, by_queue=True))
    assert not scans.mergeable(dataclasses.replace(query, states=("pending", "claimed")))
    assert not scans.mergeable(dataclasses.replace(query, endpoint_ids=()))


def test_past_the_branch_cap_the_lateral_form_serves_the_same_keys(world, three_endpoints, monkeypatch):
    monkeypatch.setattr(scans, "MERGED_MAX_BRANCHES", 2)
    sql, keys = window(world, TodoFilter(state="all"), merged=True, limit=11)
    assert "LATERAL" in sql and "UNION ALL" not in sql
    monkeypatch.setattr(scans, "MERGED_MAX_BRANCHES", 64)
    _, merged = window(world, TodoFilter(state="all"), merged=True, limit=11)
    assert keys == merged


def test_a_search_over_three_endpoints_finds_what_the_window_holds(world, three_endpoints, alice_client):
    body = alice_client.get(reverse("todo_list"), {"q": "item 2"}).content.decode()
    wanted = {t.id for t in three_endpoints if t.title == "item 2" or t.title.startswith("item 2")}
    assert set(ids_in(body)) == wanted and len(wanted) == 11

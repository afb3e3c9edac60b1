"""Dependencies on the Board: the Blocked tab and overview column count blocked todos, the drawer
shows what a todo waits for and what waits for it, and Run anyway unblocks it."""

from __future__ import annotations

from django.urls import reverse

from tests.factories import relayed
from todos.core.db import execute
from todos.core.store import agent as agent_store


def graph(world):
    parent = execute(agent_store.create(world.agent, queue="default", title="the plan")).todo
    child = execute(agent_store.create(world.agent, queue="default", title="the merge", after=[parent.id])).todo
    relayed()
    return parent, child


def test_the_blocked_tab_lists_blocked_todos_only(world, alice_client):
    parent, child = graph(world)
    body = alice_client.get(reverse("todo_list") + "?state=blocked").content.decode()
    assert "the merge" in body and "the plan" not in body
    scheduled = alice_client.get(reverse("todo_list") + "?state=scheduled").content.decode()
    assert "the merge" not in scheduled


def test_the_overview_counts_blocked_work(world, alice_client):
    graph(world)
    body = alice_client.get(reverse("overview")).content.decode()
    assert "Blocked" in body and "?state=blocked" in body


def test_the_drawer_lists_parents_and_children_each_linking_to_its_own(world, alice_client, bob_client):
    parent, child = graph(world)
    body = alice_client.get(reverse("todo_drawer", args=[child.id])).content.decode()
    assert "Blocked" in body and "Waits for" in body and reverse("todo_detail", args=[parent.id]) in body
    assert "Run anyway" in body
    body = alice_client.get(reverse("todo_drawer", args=[parent.id])).content.decode()
    assert "Waited for by" in body and reverse("todo_detail", args=[child.id]) in body
    assert bob_client.get(reverse("todo_drawer", args=[child.id])).status_code == 404


def test_run_anyway_from_the_drawer(world, alice_client):
    _, child = graph(world)
    response = alice_client.post(reverse("todo_run_anyway", args=[child.id]), {"note": "now"})
    assert response.status_code in (200, 302, 303)
    claim = execute(agent_store.claim_next(world.agent))
    assert claim is not None


def test_the_drawer_draws_a_small_graph_parents_above_children_below_each_with_its_state(world, alice_client):
    parent, child = graph(world)
    grandchild = execute(agent_store.create(world.agent, queue="default", title="the tag", after=[child.id])).todo
    body = alice_client.get(reverse("todo_drawer", args=[child.id])).content.decode()
    assert "data-dependency-graph" in body
    drawn = body[body.index("data-dependency-graph") : body.index("</figure>")]
    order = [drawn.index(f'data-graph-node="{i}"') for i in (parent.id, child.id, grandchild.id)]
    assert order == sorted(order)  # the parent above the todo, the child below
    assert f'href="{reverse("todo_detail", args=[parent.id])}"' in drawn
    assert f'href="{reverse("todo_detail", args=[grandchild.id])}"' in drawn
    assert "Pending" in drawn and "Blocked" in drawn and 'aria-current="true"' in drawn


def test_above_the_limit_the_drawer_keeps_the_lists_only(world, alice_client):
    from todos.dashboard.views.todos import GRAPH_MAX_RELATIVES

    parent = execute(agent_store.create(world.agent, queue="default", title="the fan-out")).todo
    for n in range(GRAPH_MAX_RELATIVES):
        execute(agent_store.create(world.agent, queue="default", title=f"kid {n}", after=[parent.id]))
    body = alice_client.get(reverse("todo_drawer", args=[parent.id])).content.decode()
    assert "data-dependency-graph" in body and body.count("data-graph-node=") == GRAPH_MAX_RELATIVES + 1
    execute(agent_store.create(world.agent, queue="default", title="one too many", after=[parent.id]))
    body = alice_client.get(reverse("todo_drawer", args=[parent.id])).content.decode()
    assert "data-dependency-graph" not in body and "Waited for by" in body and "one too many" in body
    lone = execute(agent_store.create(world.agent, queue="default", title="alone")).todo
    assert "data-dependency-graph" not in alice_client.get(reverse("todo_drawer", args=[lone.id])).content.decode()

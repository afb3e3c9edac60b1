"""The overview table and the agents panel."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests import factories
from tests.board.test_bulk import insert_dead_letters
from tests.factories import relayed
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.selectors.access import viewer_for
from todos.core.selectors.agents import agents
from todos.core.selectors.overview import overview
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")


def test_overview_counts_per_queue(world, alice_client):
    for state in ("pending", "pending", "claimed", "retry", "dead", "done", "done"):
        make(world, state)
    make(world, "pending", queue="email")
    make(world, "pending", agent=world.globex_agent)  # not alice's
    execute(human_store.pause_queue(world.alice, world.acme.id, "email"))
    relayed()
    data = overview(viewer_for(world.alice_user))
    rows = {s.queue: s for s in data.rows}
    assert set(rows) == {"default", "email"}
    d = rows["default"]
    assert (d.pending, d.claimed, d.retry, d.dead, d.done_hour) == (2, 1, 1, 1, 2)
    assert d.failed_hour == 1 and d.throughput == 2 and d.oldest_pending is not None
    assert rows["email"].pause is not None and rows["email"].pause.by == "alice"
    assert data.totals.pending == 3
    body = alice_client.get(reverse("overview")).content.decode()
    assert 'href="/todos/?state=dead&amp;queue=default&amp;team=acme">1</a>' in body
    assert "‖ paused" in body and "Resume" in body and "Pause" in body
    assert "<polyline points=" in body


def test_overview_counts_a_team_queue_across_its_endpoints_exactly(world, alice_client):
    """A row is a (team, queue): its numbers are the relay's counts summed over the endpoints."""
    second = factories.agent(factories.endpoint(world.acme, slug="acme-second", queues=("default",)))
    for agent in (world.agent, second):
        for state in ("dead", "dead", "pending", "pending", "retry", "claimed"):
            make(world, state, agent=agent)
    for state in ("dead", "dead", "dead", "pending"):
        make(world, state, queue="email")
    relayed()
    rows = {s.queue: s for s in overview(viewer_for(world.alice_user)).rows}
    d, e = rows["default"], rows["email"]
    assert (d.pending, d.claimed, d.retry, d.dead, d.dead_shown) == (4, 2, 2, 4, "4")
    assert (e.pending_shown, e.dead_shown) == ("1", "3")
    totals = overview(viewer_for(world.alice_user)).totals
    assert (totals.pending_shown, totals.dead_shown, totals.claimed) == ("5", "7", 2)
    body = alice_client.get(reverse("overview")).content.decode()
    assert 'href="/todos/?state=dead&amp;queue=default&amp;team=acme">4</a>' in body


def test_overview_is_exact_past_the_old_cap(world):
    insert_dead_letters(world.acme_ep.id, 1_200)
    for state in ("retry", "retry", "dead"):
        make(world, state)
    relayed()
    d = {s.queue: s for s in overview(viewer_for(world.alice_user)).rows}["default"]
    assert (d.retry, d.dead, d.dead_shown) == (2, 1_201, "1,201")


def test_overview_last_hour_from_the_relays_minutes(world):
    """Done and dead-lettered in the last hour, and the sparkline, come from the per-minute rollup
    the relay keeps: a retried dead letter still counts as dead-lettered in its minute."""
    for state in ("done", "done", "done", "dead", "canceled"):
        make(world, state)
    relayed()
    d = overview(viewer_for(world.alice_user)).rows[0]
    assert (d.done_hour_shown, d.failed_hour_shown, d.throughput) == ("3", "1", 3)
    assert d.spark[-1] == 3 and sum(d.spark) == 3
    with connect() as conn:  # finished work older than the hour drops out
        conn.execute("UPDATE todo_finished_minutes SET minute = minute - interval '61 minutes'")
    d = overview(viewer_for(world.alice_user)).rows[0]
    assert (d.done_hour, d.failed_hour, sum(d.spark)) == (0, 0, 0)


def test_overview_for_a_viewer_has_no_pause_buttons(world, vera_client):
    make(world, "pending")
    body = vera_client.get(reverse("overview")).content.decode()
    assert "default" in body and ">Pause<" not in body


def test_agents_panel(world, alice_client):
    held = make(world, "claimed", title="being worked")
    todo = make(world, "pending")
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.complete(world.agent, todo.id))
    dying = make(world, "pending")
    execute(agent_store.claim(world.agent, dying.id, lease_ttl_seconds=1))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 minute' WHERE id = %s", (dying.id,))
    execute(background_store.reap())
    make(world, "dead")
    status = {a.endpoint.slug: a for a in agents(viewer_for(world.alice_user))}
    acme = status["acme-worker"]
    assert acme.in_flight == 1 and acme.examples[0].id == held.id
    assert (acme.completed, acme.failed, acme.died) == (1, 1, 1)
    assert acme.last_heartbeat_at is not None
    assert "globex-worker" not in status
    body = alice_client.get(reverse("agents")).content.decode()
    assert "being worked" in body and 'data-live-region="agents"' in body
    assert re.search(r'<td class="num">1</td>\s*<td class="num">1</td>\s*<td class="num has-dead">1</td>', body)

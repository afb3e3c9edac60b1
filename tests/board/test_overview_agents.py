"""The overview table and the agents panel."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests import factories as f
from tests.board.conftest import make
from todos.db import connect, execute
from todos.selectors import overview as overview_module
from todos.selectors.access import viewer_for
from todos.selectors.agents import agents
from todos.selectors.overview import overview
from todos.store import agent as A
from todos.store import background as B
from todos.store import operator as O

pytestmark = pytest.mark.usefixtures("store_db")


def test_overview_counts_per_queue(world, alice_client):
    for state in ("pending", "pending", "claimed", "retry", "dead", "done", "done"):
        make(world, state)
    make(world, "pending", queue="email")
    make(world, "pending", agent=world.globex_agent)  # not alice's
    execute(O.pause_queue(world.alice, world.acme.id, "email"))
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


def test_overview_caps_a_team_queue_across_its_endpoints(world, alice_client, monkeypatch):
    """The cap is per row (team, queue): two endpoints under the cap each, over it together, read "cap+"."""
    monkeypatch.setattr(overview_module, "COUNT_CAP", 3)
    second = f.agent(f.endpoint(world.acme, slug="acme-second", queues=("default",)))
    for agent in (world.agent, second):
        for state in ("dead", "dead", "pending", "pending"):
            make(world, state, agent=agent)
    for state in ("dead", "dead", "dead", "pending"):
        make(world, state, queue="email")  # exactly the cap: exact
    rows = {s.queue: s for s in overview(viewer_for(world.alice_user)).rows}
    d, e = rows["default"], rows["email"]
    assert (d.pending, d.pending_shown, d.dead, d.dead_shown) == (3, "3+", 3, "3+")
    assert (e.pending_shown, e.dead_shown) == ("1", "3")
    totals = overview(viewer_for(world.alice_user)).totals
    assert (totals.pending_shown, totals.dead_shown) == ("4+", "6+")
    body = alice_client.get(reverse("overview")).content.decode()
    assert 'href="/todos/?state=dead&amp;queue=default&amp;team=acme">3+</a>' in body


def test_overview_dead_letters_are_exact_beside_retries(world, monkeypatch):
    """Dead letters are counted as failed minus retry scheduled: exact up to the cap however many
    retries wait beside them, "cap+" only beyond it."""
    monkeypatch.setattr(overview_module, "COUNT_CAP", 3)
    for state in ("retry", "retry", "retry", "dead", "dead", "dead"):
        make(world, state)  # 6 failed, 3 of them dead letters: exactly the cap
    for state in ("retry", "retry", "dead"):
        make(world, state, queue="email")
    second = f.agent(f.endpoint(world.acme, slug="acme-second", queues=("default", "email")))
    for state in ("retry", "dead", "dead", "dead"):
        make(world, state, agent=second, queue="email")  # with the first endpoint's: 4 dead letters
    rows = {s.queue: s for s in overview(viewer_for(world.alice_user)).rows}
    d, e = rows["default"], rows["email"]
    assert (d.retry, d.dead, d.dead_shown) == (3, 3, "3")
    assert (e.retry, e.dead, e.dead_shown) == (3, 3, "3+")


def test_overview_last_hour_reads_at_most_recent_rows(world, monkeypatch):
    """Below RECENT_ROWS finished todos the last hour's numbers are exact; reading that many, "+"."""
    for state in ("done", "done", "done", "dead", "canceled"):
        make(world, state)
    monkeypatch.setattr(overview_module, "RECENT_ROWS", 6)  # 5 finished (the canceled one too)
    d = overview(viewer_for(world.alice_user)).rows[0]
    assert (d.done_hour_shown, d.failed_hour_shown, d.throughput) == ("3", "1", 3)
    assert d.spark[-1] == 3 and sum(d.spark) == 3
    monkeypatch.setattr(overview_module, "RECENT_ROWS", 4)
    d = overview(viewer_for(world.alice_user)).rows[0]
    assert "+" in d.done_hour_shown and "+" in d.failed_hour_shown


def test_overview_for_a_viewer_has_no_pause_buttons(world, vera_client):
    make(world, "pending")
    body = vera_client.get(reverse("overview")).content.decode()
    assert "default" in body and ">Pause<" not in body


def test_agents_panel(world, alice_client):
    held = make(world, "claimed", title="being worked")
    todo = make(world, "pending")
    execute(A.claim(world.agent, todo.id))
    execute(A.complete(world.agent, todo.id))
    dying = make(world, "pending")
    execute(A.claim(world.agent, dying.id, lease_ttl_seconds=1))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 minute' WHERE id = %s", (dying.id,))
    execute(B.reap())
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

"""The Agents page acts: a team admin pauses, resumes and revokes an endpoint there; everyone who
sees it reads its throughput and failure rate over the last hour, and its last-seen time even
when it never made an HTTP request."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.factories import relayed
from tests.support.board import login, make
from todos.core.db import connect, execute
from todos.core.errors import Paused
from todos.core.selectors.access import viewer_for
from todos.core.selectors.agents import agents
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store

pytestmark = pytest.mark.usefixtures("store_db")


def endpoint_row(slug: str) -> dict:
    with connect() as conn:
        return conn.execute("SELECT * FROM endpoints WHERE slug = %s", (slug,)).fetchone()


def audit_actions(slug: str) -> list[str]:
    with connect() as conn:
        rows = conn.execute(
            """SELECT a.action FROM audit_log a JOIN endpoints e ON e.id = a.endpoint_id
               WHERE e.slug = %s ORDER BY a.id""",
            (slug,),
        ).fetchall()
    return [r["action"] for r in rows]


def row_of(body: str, slug: str) -> str:
    match = re.search(rf'<tr id="agent-{slug}".*?</tr>', body, re.S)
    assert match, f"no row for {slug}"
    return match.group(0)


@pytest.fixture
def adam_client(world):
    return login(world.adam_user)


def test_an_admin_sees_the_buttons_and_an_operator_does_not(world, adam_client, alice_client):
    admin_row = row_of(adam_client.get(reverse("agents")).content.decode(), "acme-worker")
    assert "Pause claims" in admin_row and "Revoke…" in admin_row
    assert f'action="{reverse("agent_pause", args=["acme-worker"])}"' in admin_row
    operator_body = alice_client.get(reverse("agents")).content.decode()
    assert "Pause claims" not in operator_body and "Revoke…" not in operator_body


def test_pause_then_resume_from_the_agents_page(world, adam_client):
    response = adam_client.post(reverse("agent_pause", args=["acme-worker"]), follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("agents"))
    body = response.content.decode()
    assert "Paused the claims of" in body
    paused_row = row_of(body, "acme-worker")
    assert "claims paused" in paused_row and "by adam" in paused_row and "Resume claims" in paused_row
    assert endpoint_row("acme-worker")["claims_paused_by"] == "adam"
    with pytest.raises(Paused):
        execute(agent_store.claim_next(world.agent))
    body = adam_client.post(reverse("agent_resume", args=["acme-worker"]), follow=True).content.decode()
    assert "Resumed the claims of" in body and "Pause claims" in row_of(body, "acme-worker")
    assert endpoint_row("acme-worker")["claims_paused_at"] is None
    assert audit_actions("acme-worker")[-2:] == ["endpoint.pause", "endpoint.resume"]


def test_a_second_pause_says_so_and_changes_nothing(world, adam_client):
    adam_client.post(reverse("agent_pause", args=["acme-worker"]))
    body = adam_client.post(reverse("agent_pause", args=["acme-worker"]), follow=True).content.decode()
    assert "Not paused: the endpoint&#x27;s claims are already paused." in body
    assert audit_actions("acme-worker").count("endpoint.pause") == 1


def test_a_note_too_long_is_refused_and_nothing_is_paused(world, adam_client):
    body = adam_client.post(
        reverse("agent_pause", args=["acme-worker"]), {"note": "x" * 2001}, follow=True
    ).content.decode()
    assert "Not paused: note: must be at most 2000 characters" in body
    assert endpoint_row("acme-worker")["claims_paused_at"] is None


def test_operators_viewers_and_other_teams_may_not_act(world, alice_client, vera_client, bob_client):
    for name in ("agent_pause", "agent_resume", "agent_revoke"):
        url = reverse(name, args=["acme-worker"])
        assert alice_client.post(url).status_code == 403
        assert vera_client.post(url).status_code == 403
        assert bob_client.post(url).status_code == 404  # another team's: the Board's one 404
        assert bob_client.post(reverse(name, args=["no-such-agent"])).status_code == 404
    assert alice_client.get(reverse("agent_revoke", args=["acme-worker"])).status_code == 403
    row = endpoint_row("acme-worker")
    assert row["claims_paused_at"] is None and row["state"] == "active"
    assert "endpoint.pause" not in audit_actions("acme-worker")


def test_pause_and_resume_are_posts_only(world, adam_client):
    assert adam_client.get(reverse("agent_pause", args=["acme-worker"])).status_code == 405
    assert adam_client.get(reverse("agent_resume", args=["acme-worker"])).status_code == 405


def test_revoke_asks_first_then_dead_letters_and_comes_back(world, adam_client):
    make(world, "pending")
    make(world, "claimed")
    confirm = adam_client.get(reverse("agent_revoke", args=["acme-worker"])).content.decode()
    assert "<h1>Revoke " in confirm
    assert "2 live todos will be dead-lettered" in confirm
    assert f'action="{reverse("agent_revoke", args=["acme-worker"])}"' in confirm
    assert f'href="{reverse("agents")}#agent-acme-worker"' in confirm  # Cancel goes back here
    assert endpoint_row("acme-worker")["state"] == "active"  # asking changed nothing
    response = adam_client.post(reverse("agent_revoke", args=["acme-worker"]), {"note": "leaked"}, follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("agents"))
    assert "Revoked" in response.content.decode() and "2 live todos dead-lettered" in response.content.decode()
    assert endpoint_row("acme-worker")["state"] == "revoked"
    again = adam_client.post(reverse("agent_revoke", args=["acme-worker"]), follow=True).content.decode()
    assert "is already revoked" in again


def test_revoke_refuses_a_bad_note_and_revokes_nothing(world, adam_client):
    response = adam_client.post(reverse("agent_revoke", args=["acme-worker"]), {"note": "x" * 2001})
    assert response.status_code == 422
    assert "must be at most 2000 characters" in response.content.decode()
    assert endpoint_row("acme-worker")["state"] == "active"


def test_throughput_and_failure_rate_over_the_last_hour(world, alice_client):
    for _ in range(6):
        make(world, "done")
    for _ in range(2):
        make(world, "retry")  # a failed attempt each
    held = make(world, "claimed")
    with connect() as conn:  # setup: its lease lapses (the reaper then ends the attempt: died)
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '5 seconds' WHERE id = %s", (held.id,))
        # setup: one completion two hours ago is outside the window
        conn.execute(
            """UPDATE todo_attempts SET ended_at = now() - interval '2 hours'
               WHERE ctid = (SELECT ctid FROM todo_attempts WHERE outcome = 'completed' LIMIT 1)"""
        )
    execute(background_store.reap())
    status = {a.endpoint.slug: a for a in agents(viewer_for(world.alice_user))}["acme-worker"]
    assert (status.completed, status.failed, status.died) == (5, 2, 1)
    assert status.per_minute == pytest.approx(5 / 60)
    assert status.failure_rate == pytest.approx(3 / 8)
    row = row_of(alice_client.get(reverse("agents")).content.decode(), "acme-worker")
    assert '<td class="num" data-metric="per-minute">0.1</td>' in row
    assert '<td class="num" data-metric="failure-rate">38%</td>' in row


def test_an_agent_that_finished_nothing_shows_no_rate(world, alice_client):
    row = row_of(alice_client.get(reverse("agents")).content.decode(), "acme-worker")
    assert '<td class="num" data-metric="failure-rate"><span class="muted">—</span></td>' in row
    assert '<td class="num" data-metric="per-minute">0.0</td>' in row


def test_an_agent_working_without_http_is_seen(world, alice_client):
    """In-process workers and MCP never pass the HTTP stamp: their claims stamp it."""
    make(world, "pending")
    assert "never" in row_of(alice_client.get(reverse("agents")).content.decode(), "acme-worker")
    execute(agent_store.claim_next(world.agent))
    relayed()
    row = row_of(alice_client.get(reverse("agents")).content.decode(), "acme-worker")
    assert "never" not in row


def test_the_endpoints_list_tags_a_paused_endpoint_until_it_resumes(world, adam_client):
    def endpoints_row() -> str:
        body = adam_client.get(reverse("endpoints")).content.decode()
        match = re.search(r'<tr id="endpoint-acme-worker".*?</tr>', body, re.S)
        assert match, "no row for acme-worker on the Endpoints list"
        return match.group(0)

    assert "data-claims-paused" not in endpoints_row()
    adam_client.post(reverse("agent_pause", args=["acme-worker"]))
    paused = endpoints_row()
    assert "data-claims-paused" in paused and "⏸ claims paused" in paused and "by adam" in paused
    assert f'href="{reverse("agents")}"' in paused
    adam_client.post(reverse("agent_resume", args=["acme-worker"]))
    assert "data-claims-paused" not in endpoints_row()

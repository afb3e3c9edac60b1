"""Operator actions: each is one store call answered with a fragment, a redirect without
JavaScript, a clear message on a lost race or bad input, 403 for a viewer."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store

pytestmark = pytest.mark.usefixtures("store_db")


def state_of(todo_id: str) -> dict:
    with connect() as conn:
        return conn.execute(
            "SELECT state, owner, assignee, priority, result, next_retry_at FROM todos WHERE id = %s", (todo_id,)
        ).fetchone()


def audit_actions(todo_id: str) -> list[str]:
    with connect() as conn:
        return [
            r["action"]
            for r in conn.execute("SELECT action FROM audit_log WHERE todo_id = %s ORDER BY id", (todo_id,)).fetchall()
        ]


def toasts(response) -> list[dict]:
    return json.loads(response["HX-Trigger"])["board:toast"]["items"]


def post(client, name, todo_id, data=None, **headers):
    return client.post(reverse(name, args=[todo_id]), data or {}, **headers)


def test_claim_complete_from_the_drawer(world, alice_client):
    todo = make(world, "pending")
    response = post(alice_client, "todo_claim", todo.id, {"fragment": "drawer"}, **htmx("drawer"))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.startswith('<aside id="drawer"') and "Board · alice" in body and "Complete…" in body
    assert toasts(response)[0]["level"] == "success"
    assert json.loads(response["HX-Trigger"])["board:todo-changed"] == {"id": todo.id, "source": "drawer"}
    assert state_of(todo.id)["owner"] == f"human:{world.alice_user.id}"
    response = post(
        alice_client,
        "todo_complete",
        todo.id,
        {"fragment": "drawer", "note": "checked by hand", "result": '{"ok": true, "n": 3}'},
        **htmx("drawer"),
    )
    assert response.status_code == 200
    row = state_of(todo.id)
    assert row["state"] == "done" and row["result"] == {"ok": True, "n": 3}
    assert audit_actions(todo.id) == ["todo.claim", "todo.complete"]
    assert "checked by hand" in response.content.decode()


def test_row_actions_answer_the_row(world, alice_client):
    todo = make(world, "pending")
    response = post(alice_client, "todo_claim", todo.id, {"fragment": "row"}, **htmx(f"todo-{todo.id}"))
    body = response.content.decode()
    assert body.startswith(f'<tr id="todo-{todo.id}"') and "Board · alice" in body
    assert json.loads(response["HX-Trigger"])["board:todo-changed"]["source"] == "row"
    response = post(alice_client, "todo_release", todo.id, {"fragment": "row"}, **htmx())
    assert response.status_code == 200 and state_of(todo.id)["state"] == "pending"


def test_invalid_json_result_names_the_field_and_writes_nothing(world, alice_client):
    todo = make(world, "mine")
    response = post(
        alice_client, "todo_complete", todo.id, {"fragment": "drawer", "result": "{not json"}, **htmx("drawer")
    )
    assert response.status_code == 422
    body = response.content.decode()
    assert "result: not valid JSON" in body and 'aria-invalid="true"' in body
    assert "{not json" in body  # the input is kept for correction
    assert toasts(response)[0]["message"].startswith("result: not valid JSON")
    assert state_of(todo.id)["state"] == "claimed"
    assert audit_actions(todo.id) == ["todo.claim"]


def test_invalid_json_without_javascript_shows_the_page_with_the_message(world, alice_client):
    todo = make(world, "mine")
    response = post(alice_client, "todo_complete", todo.id, {"fragment": "drawer", "result": "[1,", "next": "/todos/"})
    assert response.status_code == 422
    assert b"result: not valid JSON" in response.content and b"<html" in response.content
    assert state_of(todo.id)["state"] == "claimed"


def test_invalid_priority_names_the_field(world, alice_client):
    todo = make(world, "pending")
    response = post(
        alice_client, "todo_priority", todo.id, {"fragment": "drawer", "priority": "soon"}, **htmx("drawer")
    )
    assert response.status_code == 422 and "priority: must be a whole number" in response.content.decode()
    response = post(
        alice_client, "todo_priority", todo.id, {"fragment": "drawer", "priority": "99999"}, **htmx("drawer")
    )
    assert response.status_code == 422 and "priority: must be from -32768 to 32767" in response.content.decode()
    assert state_of(todo.id)["priority"] == 0
    response = post(alice_client, "todo_priority", todo.id, {"fragment": "drawer", "priority": "-5"}, **htmx("drawer"))
    assert response.status_code == 200 and state_of(todo.id)["priority"] == -5


def test_lost_race_says_who_won_and_shows_the_current_state(world, alice_client):
    todo = make(world, "pending")
    execute(agent_store.claim(world.agent, todo.id, claimant="fast-agent"))  # the agent got there first
    response = post(alice_client, "todo_claim", todo.id, {"fragment": "drawer"}, **htmx("drawer"))
    assert response.status_code == 409
    message = toasts(response)[0]["message"]
    assert "someone else claimed it" in message and "acme-worker" in message
    body = response.content.decode()
    assert body.startswith('<aside id="drawer"') and "Force release" in body  # the current state
    assert "Traceback" not in body


def test_conflict_on_terminal_todo(world, alice_client):
    todo = make(world, "done")
    response = post(alice_client, "todo_cancel", todo.id, {"fragment": "row"}, **htmx())
    assert response.status_code == 409
    assert toasts(response)[0]["message"] == "Could not cancel it: it is Done now."
    assert response.content.decode().startswith(f'<tr id="todo-{todo.id}"')
    response = post(alice_client, "todo_complete", make(world, "pending").id, {}, **htmx())
    assert response.status_code == 409 and "you no longer hold its lease" in toasts(response)[0]["message"]


def test_every_action_happy_path(world, alice_client, bob_client):
    pending = make(world, "pending")
    assert (
        post(
            alice_client, "todo_assign", pending.id, {"assignee": f"human:{world.alice_user.id}"}, **htmx()
        ).status_code
        == 200
    )
    assert state_of(pending.id)["assignee"] == f"human:{world.alice_user.id}"
    drawer = alice_client.get(reverse("todo_drawer", args=[pending.id])).content.decode()
    assert "Assignee</dt><dd>alice" in drawer
    assert post(alice_client, "todo_assign", pending.id, {"assignee": ""}, **htmx()).status_code == 200
    assert state_of(pending.id)["assignee"] is None
    bad = post(alice_client, "todo_assign", pending.id, {"assignee": "root"}, **htmx())
    assert bad.status_code == 422 and "assignee: must be human:" in toasts(bad)[0]["message"]
    assert post(alice_client, "todo_claim", pending.id, {}, **htmx()).status_code == 200
    assert post(alice_client, "todo_extend", pending.id, {}, **htmx()).status_code == 200
    assert post(alice_client, "todo_fail", pending.id, {"note": "broken input"}, **htmx()).status_code == 200
    row = state_of(pending.id)
    assert row["state"] == "failed" and row["next_retry_at"] is not None
    assert post(alice_client, "todo_retry", pending.id, {}, **htmx()).status_code == 200
    assert state_of(pending.id)["state"] == "pending"
    agent_held = make(world, "claimed")
    assert post(alice_client, "todo_force_release", agent_held.id, {"note": "stuck"}, **htmx()).status_code == 200
    assert state_of(agent_held.id)["state"] == "pending"
    assert post(alice_client, "todo_cancel", agent_held.id, {}, **htmx()).status_code == 200
    assert state_of(agent_held.id)["state"] == "canceled"
    assert audit_actions(pending.id) == [
        "todo.assign",
        "todo.unassign",
        "todo.claim",
        "todo.extend",
        "todo.fail",
        "todo.retry",
    ]
    assert audit_actions(agent_held.id) == ["todo.force_release", "todo.cancel"]


def test_plain_form_post_redirects_back_with_a_message(world, alice_client):
    todo = make(world, "pending")
    response = post(alice_client, "todo_claim", todo.id, {"next": "/todos/?state=pending"})
    assert response.status_code == 302 and response["Location"] == "/todos/?state=pending"
    page = alice_client.get(response["Location"])
    assert f"Claimed {todo.id[:11]}: the lease is yours." in page.content.decode()
    # a foreign "next" is not followed
    response = post(alice_client, "todo_release", todo.id, {"next": "https://evil.example/"})
    assert response["Location"] == reverse("todo_detail", args=[todo.id])
    # a conflict without JavaScript: redirect back, the message on the next page
    response = post(alice_client, "todo_release", todo.id, {"next": "/todos/"})
    assert response.status_code == 302
    assert "Could not release it" in alice_client.get("/todos/").content.decode()


def test_viewer_posts_are_refused(world, vera_client):
    todo = make(world, "pending")
    for name in ("todo_claim", "todo_cancel", "todo_priority", "todo_assign"):
        response = post(vera_client, name, todo.id, {"priority": "1"}, **htmx())
        assert response.status_code == 403, name
        assert "read-only" in toasts(response)[0]["message"]
    response = post(vera_client, "todo_claim", todo.id)
    assert response.status_code == 403 and b"read-only" in response.content
    assert state_of(todo.id)["state"] == "pending" and audit_actions(todo.id) == []


def test_create_a_todo_by_hand(world, alice_client):
    page = alice_client.get(reverse("todo_new"))
    body = page.content.decode()
    target = f"{world.acme_ep.id}|email"
    assert f'value="{target}"' in body and "globex" not in body.lower()
    response = alice_client.post(
        reverse("todo_new"),
        {"target": target, "title": "call the customer", "payload": '{"phone": "555"}', "priority": "3"},
    )
    assert response.status_code == 302
    todo_id = response["Location"].split("/")[2]
    with connect() as conn:
        row = conn.execute(
            "SELECT queue, title, payload, priority, source FROM todos WHERE id = %s", (todo_id,)
        ).fetchone()
    assert row == {
        "queue": "email",
        "title": "call the customer",
        "payload": {"phone": "555"},
        "priority": 3,
        "source": "board",
    }
    bad = alice_client.post(reverse("todo_new"), {"target": target, "title": "x", "payload": "{oops"})
    assert bad.status_code == 422 and b"payload: not valid JSON" in bad.content
    foreign = alice_client.post(reverse("todo_new"), {"target": f"{world.globex_ep.id}|default", "title": "sneaky"})
    assert foreign.status_code == 422 and b"target: pick one of your team" in foreign.content
    empty = alice_client.post(reverse("todo_new"), {"target": target, "title": "  "})
    assert empty.status_code == 422 and b"title: must not be empty" in empty.content
    with connect() as conn:
        assert conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"] == 1


def test_pause_and_resume_a_queue(world, alice_client, vera_client):
    response = alice_client.post(reverse("queue_pause"), {"team": "acme", "queue": "email"}, **htmx("overview-table"))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.startswith('<section id="overview-table"') and "‖ paused" in body and "by alice" in body
    todo = make(world, "pending", queue="email")
    assert "‖ paused" in alice_client.get(reverse("todo_row", args=[todo.id])).content.decode()
    assert "queue paused" in alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert execute(agent_store.claim_next(world.agent, queue="email")) is None  # agents skip the paused queue
    assert vera_client.post(reverse("queue_resume"), {"team": "acme", "queue": "email"}).status_code == 403
    response = alice_client.post(reverse("queue_resume"), {"team": "acme", "queue": "email", "next": "/"})
    assert response.status_code == 302
    with connect() as conn:
        assert conn.execute("SELECT count(*) AS n FROM queue_pauses").fetchone()["n"] == 0
    bad = alice_client.post(reverse("queue_pause"), {"team": "acme", "queue": "bad queue!"}, **htmx())
    assert bad.status_code == 422 and toasts(bad)[0]["message"].startswith("queue:")


def test_operator_can_take_over_a_lapsed_lease(world, alice_client):
    todo = make(world, "claimed")
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '5 seconds' WHERE id = %s", (todo.id,))
    drawer = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert "The holder stopped heartbeating" in drawer
    response = post(alice_client, "todo_claim", todo.id, {}, **htmx())
    assert response.status_code == 200 and state_of(todo.id)["owner"] == f"human:{world.alice_user.id}"


def test_a_todos_own_page_stays_a_page_after_a_live_refresh_and_an_action(world, alice_client):
    """The todo's page (``/todos/<id>/``) has its title as the page's only h1. Its drawer element
    is refreshed live and swapped by its forms: both ask for the page's variant, so neither turns
    the h1 into the drawer's h2 (nor drops ``drawer-page``); beside the list it stays an h2."""
    todo = make(world, "pending", title="Reconcile the ledger")
    page = alice_client.get(reverse("todo_detail", args=[todo.id])).content.decode()
    assert page.count("<h1") == 1 and '<h1 id="drawer-title" class="drawer-title">Reconcile the ledger</h1>' in page
    refresh_url = re.search(r'<aside id="drawer"[^>]*hx-get="([^"]+)"', page, re.S).group(1)
    assert refresh_url == reverse("todo_drawer", args=[todo.id]) + "?as=page"
    forms = page.count('name="fragment" value="drawer"')
    assert page.count('<input type="hidden" name="as" value="page">') == forms > 0

    refreshed = alice_client.get(refresh_url, **htmx("drawer")).content.decode()
    assert '<h1 id="drawer-title"' in refreshed and '<h2 id="drawer-title"' not in refreshed
    assert 'class="drawer drawer-page"' in refreshed and "?as=page" in refreshed

    acted = post(alice_client, "todo_claim", todo.id, {"fragment": "drawer", "as": "page"}, **htmx("drawer"))
    assert acted.status_code == 200 and state_of(todo.id)["owner"] == f"human:{world.alice_user.id}"
    body = acted.content.decode()
    assert '<h1 id="drawer-title"' in body and 'class="drawer drawer-page"' in body
    assert '<input type="hidden" name="as" value="page">' in body  # the next action too

    # beside the list: the drawer's own variant, unchanged
    beside = alice_client.get(reverse("todo_drawer", args=[todo.id]), **htmx("drawer")).content.decode()
    assert '<h2 id="drawer-title"' in beside and "drawer-page" not in beside and "?as=page" not in beside
    assert 'name="as"' not in beside
    released = post(alice_client, "todo_release", todo.id, {"fragment": "drawer"}, **htmx("drawer")).content.decode()
    assert '<h2 id="drawer-title"' in released and "drawer-page" not in released

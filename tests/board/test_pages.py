"""Every Board page and fragment renders for an operator, as a page and as a fragment."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.support.board import htmx, make

pytestmark = pytest.mark.usefixtures("store_db")

STATES = ("pending", "claimed", "mine", "retry", "dead", "done", "canceled")


@pytest.fixture
def todos(world):
    return {state: make(world, state) for state in STATES}


def test_pages_render_for_an_operator(world, alice_client, todos):
    for name in ("overview", "todo_list", "activity", "agents", "teams", "todo_new", "dead_letter_groups"):
        response = alice_client.get(reverse(name))
        assert response.status_code == 200, name
        body = response.content.decode()
        assert '<body data-live-page="' in body
        assert 'id="live-status" role="status" data-state="idle" hidden' in body  # live.js shows it on live pages
        assert "django_htmx/htmx-2.min.js" in body and "board/live.js" in body
    page = alice_client.get(reverse("team_detail", args=["acme"]))
    assert page.status_code == 200 and "alice" in page.content.decode()


def test_fragments_render(world, alice_client, todos):
    todo = todos["pending"]
    row = alice_client.get(reverse("todo_row", args=[todo.id]))
    assert row.status_code == 200
    assert row.content.decode().startswith(f'<tr id="todo-{todo.id}" data-todo-id="{todo.id}"')
    drawer = alice_client.get(reverse("todo_drawer", args=[todo.id]))
    assert drawer.content.decode().startswith(f'<aside id="drawer" class="drawer" data-todo-id="{todo.id}"')
    assert 'hx-trigger="live-refresh"' in drawer.content.decode()
    counts = alice_client.get(reverse("todo_counts") + "?queue=default")
    assert 'data-live-region="counts"' in counts.content.decode()
    table = alice_client.get(reverse("overview_table"))
    assert 'data-live-region="overview"' in table.content.decode()
    panel = alice_client.get(reverse("agents_panel"))
    assert 'data-live-region="agents"' in panel.content.decode()
    rows = alice_client.get(reverse("todo_list") + "?fragment=rows")
    text = rows.content.decode()
    assert text.startswith('<tbody id="todo-rows" data-live-list data-rows-url="/todos/?fragment=rows"')
    assert text.count("<tr id=") == len(STATES)


def test_list_page_shows_every_row_with_its_state_and_markup_contract(world, alice_client, todos):
    response = alice_client.get(reverse("todo_list"))
    body = response.content.decode()
    assert 'data-live-page="todos"' in body and 'data-live-filter=""' in body
    for todo in todos.values():
        assert f'id="todo-{todo.id}"' in body
    assert re.search(r'<tbody id="todo-rows" data-live-list data-rows-url="[^"]+" data-newest-cursor="[^"]+"', body)
    assert "Dead letter" in body and "Retry scheduled" in body
    # countdowns for leases and retries
    assert body.count("data-countdown=") >= 3
    # the list region is what htmx swaps; with htmx it comes alone, counts out of band
    fragment = alice_client.get(reverse("todo_list") + "?state=dead", **htmx("todo-list")).content.decode()
    assert fragment.startswith('<section id="todo-list"')
    assert 'hx-swap-oob="true"' in fragment and "<html" not in fragment
    assert todos["dead"].id in fragment and todos["pending"].id not in fragment


def test_detail_is_a_full_page_and_a_fragment(world, alice_client, todos):
    todo = todos["retry"]
    page = alice_client.get(reverse("todo_detail", args=[todo.id]))
    assert page.status_code == 200
    assert 'data-live-page="drawer"' in page.content.decode() and "<html" in page.content.decode()
    fragment = alice_client.get(reverse("todo_detail", args=[todo.id]), **htmx("drawer"))
    assert fragment.content.decode().startswith('<aside id="drawer"')
    assert fragment["Vary"] == "HX-Request, Cookie" or "HX-Request" in fragment["Vary"]


def test_drawer_shows_what_board_md_lists_and_never_the_lease_secrets(world, alice_client):
    from todos.core.db import execute
    from todos.core.store import agent as agent_store

    created = execute(
        agent_store.create(
            world.agent,
            queue="default",
            title="with history",
            payload={"user": "x", "password": "hunter2", "nested": {"api_key": "k-123"}},
            idempotency_key="key-42",
            kind="email.send",
            source="crm",
        )
    )
    todo = created.todo
    claim = execute(agent_store.claim(world.agent, todo.id, require_fence=True, claimant="worker-9"))
    execute(
        agent_store.fail(
            world.agent,
            todo.id,
            lease_token=claim.lease_token,
            summary="smtp timeout",
            artifact="https://logs.example.com/run/1",
        )
    )
    from todos.core.store import human as human_store

    execute(human_store.retry(world.alice, todo.id, note="try again now"))
    execute(agent_store.claim(world.agent, todo.id, claimant="worker-9", require_fence=True))
    body = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    for text in (
        "with history",
        "email.send",
        "crm",
        "key-42",
        "default",
        "acme-worker",
        "worker-9",
        "smtp timeout",
        "Failed: the worker reported an error; a retry is scheduled",  # in words (todos/dashboard/wording.py)
        "failed → retry_scheduled",  # and the code beside them
        "in progress",
        "Attempt history",
        "2 in total",
        "todo.retry",
        "try again now",
    ):
        assert text in body, text
    assert '<a href="https://logs.example.com/run/1" rel="noopener noreferrer nofollow"' in body
    assert "hunter2" not in body and "k-123" not in body and "••••••" in body
    assert "Force release" in body
    # never the token, its hash, the session or the claimer endpoint id
    assert claim.lease_token not in body
    assert "lease_token" not in body and "claimer_session" not in body and "claimer_endpoint" not in body


def test_drawer_marks_died_attempts_and_pruned_history(world, alice_client):
    from todos.core.db import connect, execute
    from todos.core.store import agent as agent_store
    from todos.core.store import background as background_store

    todo = execute(agent_store.create(world.agent, queue="default", title="dies")).todo
    execute(agent_store.claim(world.agent, todo.id, lease_ttl_seconds=1))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 minute' WHERE id = %s", (todo.id,))
        conn.execute(
            "UPDATE todo_attempts SET lease_expires_at = now() - interval '1 minute' WHERE todo_id = %s", (todo.id,)
        )
    assert execute(background_store.reap()).count == 1
    with connect() as conn:
        conn.execute("UPDATE todos SET attempts_pruned = 3 WHERE id = %s", (todo.id,))
    body = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert "☠ died" in body and "reaped" in body
    assert "3 earlier attempts pruned" in body


def test_human_claim_shows_board_claimant(world, alice_client, todos):
    body = alice_client.get(reverse("todo_drawer", args=[todos["mine"].id])).content.decode()
    assert "Board · alice" in body
    assert "yours" in body


def _drawer_actions(client, todo_id) -> set[str]:
    body = client.get(reverse("todo_drawer", args=[todo_id])).content.decode()
    return set(re.findall(r'action="/todos/[^/]+/([a-z-]+)/"', body))


def _row_actions(client, todo_id) -> set[str]:
    body = client.get(reverse("todo_row", args=[todo_id])).content.decode()
    return set(re.findall(r'action="/todos/[^/]+/([a-z-]+)/"', body))


def test_the_actions_that_fit_each_state(world, alice_client, todos):
    expect = {
        "pending": {"claim", "cancel", "assign", "priority", "reschedule", "edit"},
        "claimed": {"force-release", "cancel", "priority"},
        "mine": {"complete", "fail", "release", "extend", "cancel", "priority"},
        "retry": {"retry", "cancel", "priority"},
        "dead": {"retry", "cancel", "priority"},
        "done": set(),
        "canceled": set(),
    }
    for state, actions in expect.items():
        assert _drawer_actions(alice_client, todos[state].id) == actions, state
    rows = {
        "pending": {"claim"},
        "claimed": set(),  # force release asks first, in the drawer
        "mine": {"complete", "release"},
        "retry": {"retry"},
        "dead": {"retry"},
        "done": set(),
        "canceled": set(),
    }
    for state, actions in rows.items():
        assert _row_actions(alice_client, todos[state].id) == actions, state


def test_a_viewer_sees_everything_but_no_action(world, vera_client, todos):
    for state in STATES:
        assert _drawer_actions(vera_client, todos[state].id) == set(), state
        assert _row_actions(vera_client, todos[state].id) == set(), state
    body = vera_client.get(reverse("todo_list")).content.decode()
    assert "Retry all matching" not in body and 'id="bulk-form"' not in body
    assert todos["pending"].id in body
    assert "read-only" in vera_client.get(reverse("todo_drawer", args=[todos["pending"].id])).content.decode()


def test_every_page_requires_sign_in(world, client, todos):
    for url in (
        reverse("overview"),
        reverse("todo_list"),
        reverse("todo_detail", args=[todos["pending"].id]),
        reverse("activity"),
        reverse("teams"),
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next="), url
    response = client.get(reverse("todo_list"), **htmx("todo-list"))
    assert response.status_code == 200 and response["HX-Redirect"] == "/accounts/login/"
    response = client.post(reverse("todo_claim", args=[todos["pending"].id]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_sign_in_sign_out_and_password_change(world, client):
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b"Sign in to Board" in page.content
    bad = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert bad.status_code == 200 and b"did not match" in bad.content
    ok = client.post(reverse("login"), {"username": "alice", "password": "pw-for-tests-1"})
    assert ok.status_code == 302 and ok["Location"] == "/"
    assert client.get(reverse("overview")).status_code == 200
    form = client.get(reverse("password_change"))
    assert form.status_code == 200 and b"Change password" in form.content
    mismatch = client.post(
        reverse("password_change"),
        {"old_password": "pw-for-tests-1", "new_password1": "a-Long-new-pass-9", "new_password2": "different-9"},
    )
    assert mismatch.status_code == 200 and b"form-error" in mismatch.content
    changed = client.post(
        reverse("password_change"),
        {"old_password": "pw-for-tests-1", "new_password1": "a-Long-new-pass-9", "new_password2": "a-Long-new-pass-9"},
    )
    assert changed.status_code == 302 and changed["Location"] == reverse("password_change_done")
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("overview")).status_code == 302


def test_security_headers_and_no_inline_script_or_style(world, alice_client, todos):
    response = alice_client.get(reverse("todo_list"))
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
    body = response.content.decode()
    assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", body), "inline script"
    assert "<style" not in body and " style=" not in body
    assert 'hx-headers=\'{"X-CSRFToken": "' in body
    for name in ("todo_detail",):
        detail = alice_client.get(reverse(name, args=[todos["mine"].id])).content.decode()
        assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", detail) and " style=" not in detail


def test_static_files_are_served(world, alice_client):
    for path in (
        "/static/board/board.css",
        "/static/board/board.js",
        "/static/board/theme.js",
        "/static/board/live.js",
        "/static/django_htmx/htmx-2.min.js",
    ):
        response = alice_client.get(path)
        assert response.status_code == 200, path

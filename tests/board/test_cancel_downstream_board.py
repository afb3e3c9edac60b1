"""Cancel with everything downstream on the Board: offered under the drawer's dependencies, it
first shows what it would cancel (count, each todo and its state), then cancels them in one store
call; a viewer and another team get nothing."""

from __future__ import annotations

from django.urls import reverse

from tests.store.helpers import audit, sql
from tests.support.board import htmx
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def chain(world):
    """root → child → grandchild, and a finished sibling (run anyway, then done)."""
    make = lambda title, **kw: execute(agent_store.create(world.agent, queue="default", title=title, **kw)).todo  # noqa: E731
    root = make("the plan")
    child = make("the build", after=[root.id])
    grandchild = make("the deploy", after=[child.id])
    finished = make("the note", after=[root.id])
    execute(human_store.run_anyway(world.alice, finished.id))
    execute(agent_store.claim(world.agent, finished.id))
    execute(agent_store.complete(world.agent, finished.id))
    return root, child, grandchild, finished


def state(todo_id):
    return sql("SELECT todo_board_state(state, next_retry_at) AS s FROM todos WHERE id = %s", (todo_id,))[0]["s"]


def test_the_drawer_offers_it_only_where_there_is_something_downstream_and_the_person_acts(
    world, alice_client, vera_client
):
    root, child, grandchild, _ = chain(world)
    url = reverse("todo_cancel_downstream", args=[root.id])
    assert url in alice_client.get(reverse("todo_drawer", args=[root.id])).content.decode()
    assert url not in vera_client.get(reverse("todo_drawer", args=[root.id])).content.decode()
    leaf = reverse("todo_cancel_downstream", args=[grandchild.id])
    assert leaf not in alice_client.get(reverse("todo_drawer", args=[grandchild.id])).content.decode()


def test_the_preview_lists_each_downstream_todo_with_its_state_and_changes_nothing(world, alice_client):
    root, child, grandchild, finished = chain(world)
    response = alice_client.get(reverse("todo_cancel_downstream", args=[root.id]), **htmx("drawer"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "data-downstream-count>2<" in body and "3 todos wait for it" in body
    assert f'data-downstream-id="{child.id}"' in body and f'data-downstream-id="{grandchild.id}"' in body
    assert "2 levels down · will be canceled" in body and "stays done" in body
    assert "Cancel 3 todos" in body
    assert {state(t.id) for t in (root, child, grandchild)} == {"pending", "blocked"}
    page = alice_client.get(reverse("todo_cancel_downstream", args=[root.id]))
    assert page.status_code == 200 and "with everything downstream</h1>" in page.content.decode()


def test_confirming_cancels_them_all_and_answers_the_drawer(world, alice_client):
    root, child, grandchild, finished = chain(world)
    response = alice_client.post(
        reverse("todo_cancel_downstream", args=[root.id]),
        {"note": "wrong plan", "fragment": "drawer"},
        **htmx("drawer"),
    )
    assert response.status_code == 200 and 'id="drawer"' in response.content.decode()
    assert "Canceled" in response.headers["HX-Trigger"] and "2 todos downstream" in response.headers["HX-Trigger"]
    assert [state(t.id) for t in (root, child, grandchild, finished)] == ["canceled", "canceled", "canceled", "done"]
    assert [a["note"] for a in audit(grandchild.id) if a["action"] == "todo.cancel"] == ["wrong plan"]


def test_a_finished_todo_answers_what_it_is_now_and_cancels_nothing(world, alice_client):
    root, child, grandchild, _ = chain(world)
    execute(human_store.cancel(world.alice, root.id))
    response = alice_client.post(reverse("todo_cancel_downstream", args=[root.id]), **htmx("drawer"))
    assert response.status_code == 409
    assert "it is Canceled now" in response.headers["HX-Trigger"]


def test_a_viewer_is_refused_and_another_team_gets_the_one_404(world, vera_client, bob_client):
    root, child, grandchild, _ = chain(world)
    url = reverse("todo_cancel_downstream", args=[root.id])
    assert vera_client.get(url).status_code == 403 and vera_client.post(url).status_code == 403
    foreign, unknown = bob_client.get(url), bob_client.get(reverse("todo_cancel_downstream", args=["td_nope"]))
    assert foreign.status_code == unknown.status_code == 404 and foreign.content == unknown.content
    assert state(root.id) == "pending" and state(child.id) == "blocked"


def test_a_note_too_long_is_refused_naming_it_and_nothing_is_canceled(world, alice_client):
    root, child, _, _ = chain(world)
    response = alice_client.post(
        reverse("todo_cancel_downstream", args=[root.id]), {"note": "n" * 2001}, **htmx("drawer")
    )
    assert response.status_code == 422 and "note" in response.headers["HX-Trigger"]
    assert state(root.id) == "pending" and state(child.id) == "blocked"

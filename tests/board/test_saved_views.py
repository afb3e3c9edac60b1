"""Saved views: a person saves the list's filter under a name, opens it from the list's menu,
renames and deletes it. Names are 1 to 80 characters and unique per person; a person keeps at
most 100 views; another person's view is nobody's."""

from __future__ import annotations

import threading

import pytest
from django.urls import reverse

from todos.core.db import connect, execute
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.selectors import saved_views as view_reads
from todos.core.selectors.access import viewer_for
from todos.core.store import saved_views as store
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db")


def scope(user) -> OperatorScope:
    return OperatorScope(user_id=user.pk, username=user.username)


def count_views() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM saved_views").fetchone()["n"]


def fill(user, n: int) -> None:
    with connect() as conn:
        conn.execute(
            "INSERT INTO saved_views (user_id, slot, name, query) "
            "SELECT %s, i, 'view ' || i, 'state=dead' FROM generate_series(1, %s) i",
            (user.pk, n),
        )


# --- the store ----------------------------------------------------------------------------------


def test_save_list_rename_delete(world):
    alice = scope(world.alice_user)
    view = execute(store.save(alice, name="  Dead mail ", query="state=dead&queue=email"))
    assert view.name == "Dead mail" and view.query == "state=dead&queue=email"
    viewer = viewer_for(world.alice_user)
    assert [v.name for v in view_reads.views_of(viewer)] == ["Dead mail"]
    renamed = execute(store.rename(alice, view.id, name="Dead email"))
    assert renamed.name == "Dead email" and renamed.query == view.query
    assert execute(store.delete(alice, view.id)) == view.id
    assert view_reads.views_of(viewer) == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "name: must not be empty"),
        ("   ", "name: must not be empty"),
        ("x" * 81, "name: must be at most 80 characters, got 81"),
        ("two\nlines", "name: must not contain control characters"),
        (None, "name: must be a string"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_written(world, name, message):
    with pytest.raises(Invalid, match=message):
        execute(store.save(scope(world.alice_user), name=name, query="state=dead"))
    assert count_views() == 0


def test_eighty_characters_is_a_name(world):
    execute(store.save(scope(world.alice_user), name="x" * 80, query=""))
    assert count_views() == 1


def test_a_duplicate_name_is_refused_per_person(world):
    execute(store.save(scope(world.alice_user), name="Mine", query="state=dead"))
    with pytest.raises(Conflict, match="name: you already have a view named “Mine”"):
        execute(store.save(scope(world.alice_user), name="Mine", query="state=done"))
    # another person may use the same name
    execute(store.save(scope(world.bob_user), name="Mine", query="state=done"))
    assert count_views() == 2


def test_the_101st_view_is_refused(world):
    fill(world.alice_user, 100)
    with pytest.raises(Conflict, match="name: you have 100 saved views, the most one person may keep"):
        execute(store.save(scope(world.alice_user), name="one more", query=""))
    assert count_views() == 100
    # a deleted view frees its place
    execute(store.delete(scope(world.alice_user), view_reads.views_of(viewer_for(world.alice_user))[0].id))
    execute(store.save(scope(world.alice_user), name="one more", query=""))
    assert count_views() == 100


def test_two_saves_racing_for_the_last_place_keep_the_limit(world):
    fill(world.alice_user, 99)
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def save(i: int) -> None:
        barrier.wait()
        try:
            execute(store.save(scope(world.alice_user), name=f"racer {i}", query=""))
            outcomes.append("saved")
        except Conflict as exc:
            outcomes.append(exc.message)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert outcomes.count("saved") == 1, outcomes
    assert count_views() == 100


def test_renaming_to_a_taken_name_or_anothers_view_is_refused(world):
    alice = scope(world.alice_user)
    first = execute(store.save(alice, name="First", query=""))
    execute(store.save(alice, name="Second", query="state=dead"))
    with pytest.raises(Conflict, match="name: you already have a view named “Second”"):
        execute(store.rename(alice, first.id, name="Second"))
    with pytest.raises(Invalid, match="name: must not be empty"):
        execute(store.rename(alice, first.id, name=""))
    with pytest.raises(NotFound):
        execute(store.rename(scope(world.bob_user), first.id, name="Stolen"))
    with pytest.raises(NotFound):
        execute(store.delete(scope(world.bob_user), first.id))
    assert {v.name for v in view_reads.views_of(viewer_for(world.alice_user))} == {"First", "Second"}


# --- the pages ----------------------------------------------------------------------------------


def test_saving_from_the_list_opens_the_view_and_the_menu_lists_it(world, alice_client):
    response = alice_client.post(
        reverse("saved_views"), {"name": "Dead reports", "query": "state=dead&kind=report&after=junk"}
    )
    assert response.status_code == 302
    # the list's own querystring, its page cursor dropped
    assert response["Location"] == "/todos/?state=dead&kind=report"
    page = alice_client.get(response["Location"]).content.decode()
    assert '<a href="/todos/?state=dead&amp;kind=report" data-saved-view>Dead reports</a>' in page
    assert "Saved the view “Dead reports”." in page


def test_a_refused_save_says_why_on_the_views_page(world, alice_client):
    alice_client.post(reverse("saved_views"), {"name": "Dead", "query": "state=dead"})
    for data, message in (
        ({"name": "Dead", "query": "state=done"}, "name: you already have a view named “Dead”"),
        ({"name": "", "query": "state=done"}, "name: must not be empty"),
        ({"name": "y" * 81, "query": ""}, "name: must be at most 80 characters"),
        (
            {"name": "Bad", "query": "priority=lots"},
            "query: the filter has a bad value, fix it before saving (priority",
        ),
    ):
        response = alice_client.post(reverse("saved_views"), data)
        assert response.status_code == 400
        body = response.content.decode()
        assert message in body
    assert count_views() == 1


def test_the_101st_view_from_the_page(world, alice_client):
    fill(world.alice_user, 100)
    response = alice_client.post(reverse("saved_views"), {"name": "more", "query": ""})
    assert response.status_code == 400
    assert "you have 100 saved views" in response.content.decode()
    assert count_views() == 100


def test_rename_and_delete_from_the_views_page(world, alice_client, bob_client):
    view = execute(store.save(scope(world.alice_user), name="Old", query="state=dead"))
    page = alice_client.get(reverse("saved_views")).content.decode()
    assert "Old" in page and reverse("saved_view_rename", args=[view.id]) in page
    response = alice_client.post(reverse("saved_view_rename", args=[view.id]), {"name": "New"})
    assert response.status_code == 302
    assert [v.name for v in view_reads.views_of(viewer_for(world.alice_user))] == ["New"]
    refused = alice_client.post(reverse("saved_view_rename", args=[view.id]), {"name": ""})
    assert refused.status_code == 400 and "name: must not be empty" in refused.content.decode()
    # another person's view: the Board's one 404, and nothing changes
    assert bob_client.post(reverse("saved_view_rename", args=[view.id]), {"name": "Bob's"}).status_code == 404
    assert bob_client.post(reverse("saved_view_delete", args=[view.id])).status_code == 404
    assert "New" not in bob_client.get(reverse("saved_views")).content.decode()
    assert alice_client.post(reverse("saved_view_delete", args=[view.id])).status_code == 302
    assert count_views() == 0

"""People on the Board: site admins create people (a temporary password shown once), deactivate
and reactivate them and reset passwords; nobody else reaches any of it."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.test import Client
from django.urls import reverse

from tests import factories
from tests.support.board import login
from todos.core.db import connect

pytestmark = pytest.mark.usefixtures("store_db")


def snapshot() -> tuple:
    with connect() as conn:
        return (
            conn.execute("SELECT id, username, password, is_active FROM auth_user ORDER BY id").fetchall(),
            conn.execute("SELECT team_id, user_id, role FROM team_members ORDER BY 1, 2").fetchall(),
            conn.execute("SELECT count(*) AS n FROM audit_log").fetchone(),
        )


def shown_password(response) -> str:
    body = response.content.decode()
    start = body.index('id="temp-password"')
    return body[body.index('value="', start) + 7 : body.index('"', body.index('value="', start) + 7)]


@pytest.fixture
def root(world):
    return login(factories.user("root", superuser=True))


def test_site_admin_creates_a_person_in_a_team_who_can_then_sign_in(world, root):
    page = root.get(reverse("people")).content.decode()
    assert "Create a person" in page and "alice" in page and "bob" in page
    assert 'href="/people/"' in root.get(reverse("overview")).content.decode()  # in the main navigation
    response = root.post(reverse("person_create"), {"username": "pat", "team": "acme", "role": "operator"})
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    password = shown_password(response)
    assert "shown once" in response.content.decode()
    assert authenticate(username="pat", password=password) is not None
    # the new person signs in and sees acme's work
    client = Client()
    assert client.post(reverse("login"), {"username": "pat", "password": password}).status_code == 302
    assert "default" in client.get(reverse("overview")).content.decode()
    listing = root.get(reverse("people")).content.decode()
    assert password not in listing and "root created pat" in listing
    # and the team's admins see who joined
    acme_activity = login(world.adam_user).get(reverse("activity")).content.decode()
    assert "pat" in acme_activity


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"username": "alice"}, "username: &#x27;alice&#x27; is already taken"),
        ({"username": "has space"}, "username: must be"),
        ({"username": ""}, "username: is required"),
        ({"username": "pat", "team": "nope"}, "team: no team with slug “nope”"),
        ({"username": "pat", "team": "acme", "role": "king"}, "role: must be one of viewer, operator, admin"),
    ],
)
def test_create_refuses_bad_input_and_writes_nothing(world, root, data, message):
    before = snapshot()
    response = root.post(reverse("person_create"), data)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert snapshot() == before


def test_deactivate_reactivate_and_reset(world, root):
    alice = world.alice_user
    alice_client = login(alice)
    assert alice_client.get(reverse("overview")).status_code == 200
    response = root.post(reverse("person_deactivate", args=[alice.id]))
    assert response.status_code == 302
    assert not get_user_model().objects.get(pk=alice.id).is_active
    # her open session ends at her next request, and she cannot sign in again
    assert alice_client.get(reverse("overview")).status_code == 302
    assert authenticate(username="alice", password="pw-for-tests-1") is None
    again = root.post(reverse("person_deactivate", args=[alice.id]))
    assert again.status_code == 409 and "Already deactivated." in again.content.decode()
    refused = root.post(reverse("person_password_reset", args=[alice.id]))
    assert refused.status_code == 409 and "reactivate them first" in refused.content.decode()
    assert root.post(reverse("person_reactivate", args=[alice.id])).status_code == 302
    reset = root.post(reverse("person_password_reset", args=[alice.id]))
    assert reset.status_code == 200 and "no-store" in reset["Cache-Control"]
    assert authenticate(username="alice", password=shown_password(reset)) is not None
    assert authenticate(username="alice", password="pw-for-tests-1") is None
    for name in ("person_deactivate", "person_reactivate", "person_password_reset"):
        assert root.post(reverse(name, args=[999_999])).status_code == 404
    with connect() as conn:
        actions = [
            r["action"]
            for r in conn.execute("SELECT action FROM audit_log WHERE team_id IS NULL ORDER BY id").fetchall()
        ]
    assert actions == ["person.deactivate", "person.reactivate", "person.password_reset"]
    # each also in alice's team's Activity, and filterable there
    activity = login(world.adam_user).get(reverse("activity"), {"action": "person.deactivate"})
    assert activity.status_code == 200 and "unknown action" not in activity.content.decode()
    assert '<span class="audit-action">deactivated a person</span>' in activity.content.decode()
    assert "user=alice" in activity.content.decode()
    # not in another team's
    outsider = login(world.bob_user).get(reverse("activity"), {"action": "person.deactivate"}).content.decode()
    assert "unknown action" not in outsider and "user=alice" not in outsider and "Nothing recorded" in outsider


def test_a_site_admin_cannot_deactivate_themselves(world):
    root_user = factories.user("root", superuser=True)
    root = login(root_user)
    response = root.post(reverse("person_deactivate", args=[root_user.id]))
    assert response.status_code == 422 and "you cannot deactivate yourself" in response.content.decode()
    assert get_user_model().objects.get(pk=root_user.id).is_active


@pytest.mark.parametrize("who", ["adam", "alice", "vera", "bob"])
def test_nobody_but_a_site_admin_reaches_people(world, who):
    """Team admins included: they add existing people to their own team (test_teams.py)."""
    client = login(getattr(world, f"{who}_user"))
    before = snapshot()
    target = world.bob_user.id
    assert client.get(reverse("people")).status_code == 403
    assert client.post(reverse("person_create"), {"username": "pat"}).status_code == 403
    for name in ("person_deactivate", "person_reactivate", "person_password_reset"):
        assert client.post(reverse(name, args=[target])).status_code == 403
    assert snapshot() == before
    assert 'href="/people/"' not in client.get(reverse("overview")).content.decode()


def test_a_team_admin_adding_an_unknown_person_is_told_who_creates_them(world):
    adam = login(world.adam_user)
    response = adam.post(reverse("team_member_set", args=["acme"]), {"username": "ghost", "role": "viewer"})
    assert response.status_code == 422
    assert "ask a site admin to create them" in response.content.decode()
    root = login(factories.user("root", superuser=True))
    response = root.post(reverse("team_member_set", args=["acme"]), {"username": "ghost", "role": "viewer"})
    assert "create them on the People page" in response.content.decode()


def test_a_team_a_site_admin_creates_is_theirs_to_vend_into(world, root):
    assert root.post(reverse("team_create"), {"name": "Initech", "slug": "initech"}).status_code == 302
    page = root.get(reverse("endpoints")).content.decode()
    assert "Initech" in page  # a member (its admin) at once, so it is on their Endpoints page

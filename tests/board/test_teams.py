"""Teams: site admins create teams and manage anyone; team admins manage their own team;
operators and viewers see the team and change nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests import factories
from tests.support.board import login
from todos.core.db import connect

pytestmark = pytest.mark.usefixtures("store_db")


def members(slug: str) -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT u.username, m.role FROM team_members m JOIN teams t ON t.id = m.team_id "
            "JOIN auth_user u ON u.id = m.user_id WHERE t.slug = %s",
            (slug,),
        ).fetchall()
    return {r["username"]: r["role"] for r in rows}


def test_site_admin_creates_a_team_and_adds_people(world):
    root = login(factories.user("root", superuser=True))
    page = root.get(reverse("teams")).content.decode()
    assert "Create a team" in page and "Acme" in page and "Globex" in page  # a site admin sees every team
    response = root.post(reverse("team_create"), {"name": "Initech", "slug": "initech"})
    assert response.status_code == 302 and response["Location"] == reverse("team_detail", args=["initech"])
    taken = root.post(reverse("team_create"), {"name": "Again", "slug": "initech"})
    assert taken.status_code == 422 and b"slug: &#x27;initech&#x27; is already taken" in taken.content
    bad = root.post(reverse("team_create"), {"name": "", "slug": "Bad Slug"})
    assert bad.status_code == 422
    assert (
        root.post(reverse("team_member_set", args=["initech"]), {"username": "bob", "role": "admin"}).status_code == 302
    )
    assert members("initech") == {"root": "admin", "bob": "admin"}  # the creator is its first admin
    with connect() as conn:
        assert (
            conn.execute(
                "SELECT count(*) AS n FROM audit_log WHERE action IN ('team.create', 'member.set')"
            ).fetchone()["n"]
            >= 2
        )


def test_team_admin_manages_own_members(world):
    adam = login(world.adam_user)
    page = adam.get(reverse("team_detail", args=["acme"])).content.decode()
    assert "Add member" in page and "Remove" in page
    assert (
        adam.post(reverse("team_member_set", args=["acme"]), {"username": "bob", "role": "viewer"}).status_code == 302
    )
    assert members("acme")["bob"] == "viewer"
    assert (
        adam.post(
            reverse("team_member_set", args=["acme"]), {"user_id": world.bob_user.id, "role": "operator"}
        ).status_code
        == 302
    )
    assert members("acme")["bob"] == "operator"
    unknown = adam.post(reverse("team_member_set", args=["acme"]), {"username": "nobody", "role": "viewer"})
    assert unknown.status_code == 422 and "username: no active user named “nobody”".encode() in unknown.content
    bad_role = adam.post(reverse("team_member_set", args=["acme"]), {"username": "bob", "role": "king"})
    assert bad_role.status_code == 422 and b"role: must be one of viewer, operator, admin" in bad_role.content
    assert adam.post(reverse("team_member_remove", args=["acme", world.bob_user.id])).status_code == 302
    assert "bob" not in members("acme")
    again = adam.post(reverse("team_member_remove", args=["acme", world.bob_user.id]))
    assert again.status_code == 409
    # not a site admin: no team creation
    assert adam.post(reverse("team_create"), {"name": "X", "slug": "x"}).status_code == 403


@pytest.mark.parametrize("who", ["alice", "vera"])
def test_operators_and_viewers_see_but_cannot_change(world, who):
    client = login(getattr(world, f"{who}_user"))
    page = client.get(reverse("team_detail", args=["acme"])).content.decode()
    assert "alice" in page and "vera" in page and "acme-worker" in page
    assert "Add member" not in page and "Remove" not in page and "<select" not in page
    before = members("acme")
    assert client.post(reverse("team_member_set", args=["acme"]), {"username": who, "role": "admin"}).status_code == 403
    assert client.post(reverse("team_member_remove", args=["acme", world.adam_user.id])).status_code == 403
    assert members("acme") == before
    listing = client.get(reverse("teams")).content.decode()
    assert "Acme" in listing and "Globex" not in listing and "Create a team" not in listing


def test_endpoint_list_is_read_only_and_never_shows_the_credential_hash(world, alice_client):
    page = alice_client.get(reverse("team_detail", args=["acme"])).content.decode()
    with connect() as conn:
        row = conn.execute(
            "SELECT encode(credential_hash, 'hex') AS h, credential_prefix FROM endpoints WHERE slug = 'acme-worker'"
        ).fetchone()
    assert row["credential_prefix"] in page and row["h"] not in page
    assert "rotate" not in page.lower() and "revoke" not in page.lower()

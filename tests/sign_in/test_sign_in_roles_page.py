"""``/people/sign-in-roles/``: site admins list, add and remove group mappings; audited; everyone
else is refused; bad input names the field and writes nothing."""

from __future__ import annotations

import pytest

from tests import factories
from tests.support.board import login
from todos.core.db import connect


def mappings() -> list[tuple[str, str]]:
    with connect() as conn:
        rows = conn.execute("SELECT group_value, role FROM oidc_role_mappings ORDER BY id").fetchall()
    return [(r["group_value"], r["role"]) for r in rows]


@pytest.fixture
def root_client(world):
    return login(factories.user("root", superuser=True))


def test_a_site_admin_adds_lists_and_removes_a_mapping(root_client):
    added = root_client.post("/people/sign-in-roles/new/", {"group": "ops", "team": "acme", "role": "operator"})
    assert added.status_code == 302
    assert mappings() == [("ops", "operator")]
    page = root_client.get("/people/sign-in-roles/").content.decode()
    assert "ops" in page and "Group ops now grants operator of acme" in page
    with connect() as conn:
        mapping_id = conn.execute("SELECT id FROM oidc_role_mappings").fetchone()["id"]  # type: ignore[index]
        actions = [r["action"] for r in conn.execute("SELECT action FROM audit_log WHERE actor = 'root'").fetchall()]
    assert "sign_in.mapping_add" in actions
    assert root_client.post(f"/people/sign-in-roles/{mapping_id}/remove/").status_code == 302
    assert mappings() == []
    assert root_client.post(f"/people/sign-in-roles/{mapping_id}/remove/").status_code == 404
    assert root_client.post("/people/sign-in-roles/99999999999999999999/remove/").status_code == 404
    assert root_client.post("/people/sign-in-roles/x/remove/").status_code == 404


def test_bad_input_names_the_field_and_writes_nothing(root_client):
    for data, says in [
        ({"group": "ops", "team": "nope", "role": "viewer"}, "team: no team with slug"),
        ({"group": "ops", "team": "", "role": "viewer"}, "team: is required"),
        ({"group": "  ", "team": "acme", "role": "viewer"}, "group: is required"),
        ({"group": "ops", "team": "acme", "role": "king"}, "role: must be one of"),
    ]:
        response = root_client.post("/people/sign-in-roles/new/", data)
        assert response.status_code == 422 and says in response.content.decode()
    assert mappings() == []


def test_everyone_but_site_admins_is_refused(world):
    admin = login(world.adam_user)  # a team admin, not a site admin
    assert admin.get("/people/sign-in-roles/").status_code == 403
    assert (
        admin.post("/people/sign-in-roles/new/", {"group": "ops", "team": "acme", "role": "admin"}).status_code == 403
    )
    assert mappings() == []

"""People in the store: create, deactivate, reactivate, reset a password; each audited once for
the site and once in each of the person's teams; a team's creator becomes its admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate, get_user_model

from tests import factories
from todos.core.db import connect, execute
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.store import people
from todos.core.store import teams as team_store
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db")


def audit(action: str) -> list[dict]:
    with connect() as conn:
        return conn.execute(
            "SELECT team_id, actor, detail FROM audit_log WHERE action = %s ORDER BY id", (action,)
        ).fetchall()


def root_scope():
    root = factories.user("root", superuser=True)
    return OperatorScope(user_id=root.id, username="root")


def test_create_person_signs_in_with_the_temporary_password_and_is_audited():
    by = root_scope()
    acme = factories.team("acme")
    created = execute(people.create_person(by, username="pat", team_id=acme.id, role="operator"))
    assert created.person.username == "pat" and created.person.is_active and not created.person.is_superuser
    assert len(created.password) >= 16
    assert authenticate(username="pat", password=created.password) is not None
    with connect() as conn:
        stored = conn.execute("SELECT password FROM auth_user WHERE username = 'pat'").fetchone()["password"]
        role = conn.execute("SELECT role FROM team_members WHERE user_id = %s", (created.person.id,)).fetchone()
    assert created.password not in stored  # only the hash is kept
    assert role["role"] == "operator"
    [site] = audit("person.create")
    assert site["team_id"] is None and site["actor"] == "root" and site["detail"]["user"] == "pat"
    [joined] = audit("member.set")
    assert joined["team_id"] == acme.id and joined["detail"] == {"user": "pat", "from": None, "to": "operator"}


def test_create_person_refuses_bad_input_and_writes_nothing():
    by = root_scope()
    execute(people.create_person(by, username="pat"))
    with pytest.raises(Invalid, match="username: 'pat' is already taken"):
        execute(people.create_person(by, username="pat"))
    with pytest.raises(Invalid, match="username: must be"):
        people.create_person(by, username="no spaces")
    with pytest.raises(Invalid, match="username: is required"):
        people.create_person(by, username="   ")
    with pytest.raises(Invalid, match="role: must be one of"):
        people.create_person(by, username="sam", team_id=factories.team().id, role="king")
    with pytest.raises(Invalid, match="role: a team and a role go together"):
        people.create_person(by, username="sam", role="viewer")
    from uuid import uuid4

    with pytest.raises(NotFound, match="no such team"):
        execute(people.create_person(by, username="sam", team_id=uuid4(), role="viewer"))
    assert not get_user_model().objects.filter(username="sam").exists()
    assert len(audit("person.create")) == 1


def test_deactivate_and_reactivate_are_audited_per_team_and_guarded():
    by = root_scope()
    acme, globex = factories.team("acme"), factories.team("globex")
    pat = factories.user("pat")
    factories.member(acme, pat, "viewer")
    factories.member(globex, pat, "operator")
    gone = execute(people.set_active(by, user_id=pat.id, active=False))
    assert not gone.is_active
    assert authenticate(username="pat", password="pw-for-tests-1") is None
    rows = audit("person.deactivate")
    assert sorted(str(r["team_id"]) for r in rows) == sorted(["None", str(acme.id), str(globex.id)])
    with pytest.raises(Conflict, match="already deactivated"):
        execute(people.set_active(by, user_id=pat.id, active=False))
    back = execute(people.set_active(by, user_id=pat.id, active=True))
    assert back.is_active and authenticate(username="pat", password="pw-for-tests-1") is not None
    with pytest.raises(Conflict, match="already active"):
        execute(people.set_active(by, user_id=pat.id, active=True))
    with pytest.raises(NotFound):
        execute(people.set_active(by, user_id=999_999, active=False))
    with pytest.raises(Invalid, match="you cannot deactivate yourself"):
        people.set_active(by, user_id=by.user_id, active=False)
    assert len(audit("person.reactivate")) == 3  # memberships survive a deactivation


def test_reset_password_replaces_the_old_one_and_refuses_a_deactivated_person():
    by = root_scope()
    pat = factories.user("pat")
    reset = execute(people.reset_password(by, user_id=pat.id))
    assert authenticate(username="pat", password="pw-for-tests-1") is None
    assert authenticate(username="pat", password=reset.password) is not None
    assert [r["team_id"] for r in audit("person.password_reset")] == [None]
    execute(people.set_active(by, user_id=pat.id, active=False))
    with pytest.raises(Conflict, match="reactivate them first"):
        execute(people.reset_password(by, user_id=pat.id))
    with pytest.raises(NotFound):
        execute(people.reset_password(by, user_id=999_999))


def test_the_creator_of_a_team_becomes_its_admin():
    by = root_scope()
    team = execute(team_store.create_team(slug="initech", name="Initech", by=by))
    with connect() as conn:
        row = conn.execute("SELECT user_id, role FROM team_members WHERE team_id = %s", (team.id,)).fetchone()
    assert row == {"user_id": by.user_id, "role": "admin"}
    assert [r["detail"]["to"] for r in audit("member.set")] == ["admin"]
    shell = execute(team_store.create_team(slug="hooli", name="Hooli"))  # from the shell: no members
    with connect() as conn:
        assert (
            conn.execute("SELECT count(*) AS n FROM team_members WHERE team_id = %s", (shell.id,)).fetchone()["n"] == 0
        )

"""Single sign-on in the store: a sign-in finds or makes its person, and the group mappings own
the memberships they grant (and only those)."""

from __future__ import annotations

import threading

import pytest

from tests import factories
from todos.core.db import connect, execute
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.store import identities
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db")

ISSUER = "https://id.example.com"


def roles(user_id: int) -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT t.slug, m.role FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = %s",
            (user_id,),
        ).fetchall()
    return {row["slug"]: row["role"] for row in rows}


def audit(action: str) -> list[dict]:
    with connect() as conn:
        return conn.execute(
            "SELECT team_id, actor, detail FROM audit_log WHERE action = %s ORDER BY id", (action,)
        ).fetchall()


def sign_in(subject: str = "sub-1", email: str = "pat@example.com", verified: bool = True):
    return execute(identities.sign_in(issuer=ISSUER, subject=subject, email=email, email_verified=verified))


def root_scope() -> OperatorScope:
    root = factories.user("root", superuser=True)
    return OperatorScope(user_id=root.id, username="root")


def test_first_sign_in_creates_the_person_and_a_second_finds_them_by_subject_after_an_email_change():
    first = sign_in()
    assert first.created and first.username == "pat@example.com" and first.is_active
    [created] = audit("person.create")
    assert created["actor"] == identities.SIGN_IN_ACTOR and created["detail"]["user"] == "pat@example.com"
    again = sign_in(email="pat.new@example.com")
    assert again.user_id == first.user_id and not again.created
    with connect() as conn:
        row = conn.execute("SELECT email, password FROM auth_user WHERE id = %s", (first.user_id,)).fetchone()
    assert row["email"] == "pat.new@example.com"
    assert row["password"].startswith("!")  # no usable password


def test_an_existing_person_is_matched_by_verified_email_case_insensitively_only():
    pat = factories.user("pat")
    pat.email = "Pat@Example.com"
    pat.save()
    matched = sign_in(subject="s-verified", email="PAT@example.com")
    assert matched.user_id == pat.id and not matched.created
    unverified = sign_in(subject="s-unverified", email="pat@example.COM", verified=False)
    assert unverified.user_id != pat.id and unverified.created
    assert unverified.username == "pat@example.com"


def test_a_taken_username_gets_a_suffix_and_two_people_with_one_email_are_refused():
    factories.user("pat@example.com")
    made = sign_in(verified=False)
    assert made.username.startswith("pat@example.com-") and made.created
    a, b = factories.user("a"), factories.user("b")
    for person in (a, b):
        person.email = "twin@example.com"
        person.save()
    with pytest.raises(Conflict, match="more than one person has this email"):
        sign_in(subject="twin", email="twin@example.com")
    with connect() as conn:
        assert conn.execute("SELECT count(*) AS n FROM person_identities WHERE subject = 'twin'").fetchone()["n"] == 0


def test_sign_in_refuses_bad_input():
    with pytest.raises(Invalid, match="email: is required"):
        identities.sign_in(issuer=ISSUER, subject="s", email=" ", email_verified=True)
    with pytest.raises(Invalid, match="email: must be an email address"):
        identities.sign_in(issuer=ISSUER, subject="s", email="nobody", email_verified=True)
    with pytest.raises(Invalid, match="subject: is required"):
        identities.sign_in(issuer=ISSUER, subject="", email="a@b.c", email_verified=True)
    with pytest.raises(Invalid, match="subject: must be at most 255"):
        identities.sign_in(issuer=ISSUER, subject="x" * 256, email="a@b.c", email_verified=True)


def test_two_first_sign_ins_at_once_make_one_person():
    barrier = threading.Barrier(2)
    results: list = []

    def run():
        barrier.wait()
        try:
            results.append(sign_in(subject="racer", email="racer@example.com", verified=False))
        except Conflict as exc:
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with connect() as conn:
        people = conn.execute("SELECT count(*) AS n FROM auth_user WHERE email = 'racer@example.com'").fetchone()["n"]
        ids = conn.execute("SELECT count(*) AS n FROM person_identities WHERE subject = 'racer'").fetchone()["n"]
    assert ids == 1
    # the loser either found the winner's identity or was told to sign in again: never two identities
    assert people in (1, 2)
    assert any(not isinstance(r, Exception) for r in results)


def test_mappings_add_change_and_remove_only_the_memberships_they_own():
    by = root_scope()
    acme, globex, initech = factories.team("acme"), factories.team("globex"), factories.team("initech")
    execute(identities.add_mapping(by, group_value="ops", team_id=acme.id, role="operator"))
    execute(identities.add_mapping(by, group_value="leads", team_id=acme.id, role="admin"))
    execute(identities.add_mapping(by, group_value="ops", team_id=globex.id, role="viewer"))
    execute(identities.add_mapping(by, group_value="ops", team_id=initech.id, role="viewer"))
    pat = sign_in()
    # a hand-granted membership in a team a group also grants
    pat_user = type("U", (), {"id": pat.user_id, "username": pat.username})()
    factories.member(initech, pat_user, "admin")

    first = execute(identities.apply_mappings(user_id=pat.user_id, groups=["ops", "leads"]))
    assert first == identities.MappingOutcome(added=2, changed=0, removed=0)
    assert roles(pat.user_id) == {"acme": "admin", "globex": "viewer", "initech": "admin"}

    second = execute(identities.apply_mappings(user_id=pat.user_id, groups=["ops"]))
    assert second == identities.MappingOutcome(added=0, changed=1, removed=0)
    assert roles(pat.user_id)["acme"] == "operator"

    third = execute(identities.apply_mappings(user_id=pat.user_id, groups=[]))
    assert third == identities.MappingOutcome(added=0, changed=0, removed=2)
    assert roles(pat.user_id) == {"initech": "admin"}  # the hand-granted one stays

    by_sign_in = [row for row in audit("member.set") if row["actor"] == identities.SIGN_IN_ACTOR]
    assert {(r["detail"]["from"], r["detail"]["to"]) for r in by_sign_in} == {
        (None, "admin"),
        (None, "viewer"),
        ("admin", "operator"),
    }
    assert len([r for r in audit("member.remove") if r["actor"] == identities.SIGN_IN_ACTOR]) == 2


def test_a_membership_removed_by_hand_drops_its_mark_and_the_groups_claim_may_be_odd():
    by = root_scope()
    acme = factories.team("acme")
    execute(identities.add_mapping(by, group_value="ops", team_id=acme.id, role="viewer"))
    pat = sign_in()
    execute(identities.apply_mappings(user_id=pat.user_id, groups="ops"))  # one string is one group
    with connect() as conn:
        conn.execute("DELETE FROM team_members WHERE user_id = %s", (pat.user_id,))
        assert conn.execute("SELECT count(*) AS n FROM oidc_memberships").fetchone()["n"] == 0
    assert execute(identities.apply_mappings(user_id=pat.user_id, groups={"not": "a list"})).added == 0
    assert execute(identities.apply_mappings(user_id=pat.user_id, groups=[1, None, "ops"])).added == 1


def test_a_deactivated_person_gains_no_memberships():
    by = root_scope()
    acme = factories.team("acme")
    execute(identities.add_mapping(by, group_value="ops", team_id=acme.id, role="viewer"))
    pat = sign_in()
    with connect() as conn:
        conn.execute("UPDATE auth_user SET is_active = false WHERE id = %s", (pat.user_id,))
    assert execute(identities.apply_mappings(user_id=pat.user_id, groups=["ops"])).added == 0


def test_mapping_edits_are_audited_and_refuse_bad_input():
    by = root_scope()
    acme = factories.team("acme")
    made = execute(identities.add_mapping(by, group_value=" ops ", team_id=acme.id, role="operator"))
    assert made.group_value == "ops"
    [added] = audit("sign_in.mapping_add")
    assert added["team_id"] == acme.id and added["actor"] == "root"
    assert added["detail"] == {"group": "ops", "role": "operator", "team": "acme"}
    with pytest.raises(Invalid, match="group: 'ops' already maps to this team"):
        execute(identities.add_mapping(by, group_value="ops", team_id=acme.id, role="viewer"))
    with pytest.raises(Invalid, match="role: must be one of"):
        identities.add_mapping(by, group_value="x", team_id=acme.id, role="king")
    with pytest.raises(Invalid, match="group: is required"):
        identities.add_mapping(by, group_value="  ", team_id=acme.id, role="viewer")
    with pytest.raises(Invalid, match="team: must be a team id"):
        identities.add_mapping(by, group_value="x", team_id="acme", role="viewer")
    from uuid import uuid4

    with pytest.raises(NotFound, match="no such team"):
        execute(identities.add_mapping(by, group_value="x", team_id=uuid4(), role="viewer"))
    execute(identities.remove_mapping(by, mapping_id=made.id))
    assert len(audit("sign_in.mapping_remove")) == 1
    with pytest.raises(NotFound, match="no such mapping"):
        execute(identities.remove_mapping(by, mapping_id=made.id))
    with pytest.raises(Invalid, match="mapping: must be"):
        identities.remove_mapping(by, mapping_id="1")

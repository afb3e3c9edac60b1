"""Credentials, scopes and memberships: vend, rotate, scopes, default lease, delete, last-seen;
teams and members. Every change is audited; tokens are stored only as digests."""

from __future__ import annotations

import hashlib

import pytest

from tests import factories
from tests.store.helpers import audit, counts, listening, one, row, sql
from todos.core.db import execute
from todos.core.store import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import teams as team_store


def endpoint_row(endpoint_id) -> dict:
    return one("SELECT * FROM endpoints WHERE id = %s", (endpoint_id,))


# --- endpoints --------------------------------------------------------------------------------


def test_vend_stores_only_the_digest_and_a_prefix(world):
    vended = execute(
        endpoint_store.vend(
            world.admin,
            team_id=world.team.id,
            name="CI fixer",
            slug="ci-fixer",
            verbs=["complete", "claim_next"],
            queues=["ci", "ci", "builds"],
            default_lease_ttl_seconds=600,
        )
    )
    token = vended.token
    assert token.startswith("bd_") and len(token) >= 3 + 43
    r = endpoint_row(vended.endpoint.id)
    assert bytes(r["credential_hash"]) == hashlib.sha256(token.encode()).digest() == endpoint_store.token_hash(token)
    assert r["credential_prefix"] == token[:10]
    assert token not in str(r)
    assert r["scope_verbs"] == ["claim_next", "complete"]  # canonical order
    assert r["scope_queues"] == ["builds", "ci"]  # sorted, deduplicated
    assert (r["default_lease_ttl_seconds"], r["state"], r["created_by"]) == (600, "active", world.admin.user_id)
    [entry] = [a for a in audit() if a["action"] == "endpoint.vend" and a["user_id"] == world.admin.user_id]
    assert entry["detail"] == {"verbs": ["claim_next", "complete"], "queues": ["builds", "ci"]}
    assert token not in str(entry)


def test_vend_refusals(world):
    ok = dict(team_id=world.team.id, name="n", slug="fresh", verbs=["claim"], queues=["q"])
    before = counts()
    for who, error in ((world.human, Forbidden), (world.viewer, Forbidden)):
        with pytest.raises(error):
            execute(endpoint_store.vend(who, **ok))
    with pytest.raises(NotFound):
        execute(endpoint_store.vend(world.admin, **{**ok, "team_id": "00000000-0000-0000-0000-000000000000"}))
    with pytest.raises(Invalid) as info:
        execute(endpoint_store.vend(world.admin, **{**ok, "slug": "worker"}))  # taken
    assert info.value.field == "slug"
    bad = [
        ("slug", {"slug": "Has Caps"}),
        ("slug", {"slug": "-x"}),
        ("slug", {"slug": "x" * 64}),
        ("name", {"name": ""}),
        ("name", {"name": "n" * 201}),
        ("scope_verbs", {"verbs": []}),
        ("scope_verbs", {"verbs": ["claim", "delete_everything"]}),
        ("scope_queues", {"queues": []}),
        ("scope_queues", {"queues": ["bad queue"]}),
        ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": 59}),
        ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": 86401}),
        ("team", {"team_id": "not-a-team"}),
    ]
    for field, change in bad:
        with pytest.raises(Invalid) as info:
            execute(endpoint_store.vend(world.admin, **{**ok, **change}))
        assert info.value.field == field, change
    assert counts() == before


def test_rotate_replaces_the_token_at_once(world):
    old_hash = bytes(endpoint_row(world.agent.endpoint_id)["credential_hash"])
    rotated = execute(endpoint_store.rotate(world.admin, world.agent.endpoint_id))
    r = endpoint_row(world.agent.endpoint_id)
    assert bytes(r["credential_hash"]) == endpoint_store.token_hash(rotated.token) != old_hash
    assert r["credential_prefix"] == rotated.token[:10]
    assert sql("SELECT count(*) AS n FROM endpoints WHERE credential_hash = %s", (old_hash,))[0]["n"] == 0
    assert [a["action"] for a in audit() if a["endpoint_id"] == world.agent.endpoint_id][-1] == "endpoint.rotate"
    with pytest.raises(Forbidden):
        execute(endpoint_store.rotate(world.human, world.agent.endpoint_id))
    with pytest.raises(NotFound):
        execute(endpoint_store.rotate(world.outsider, world.agent.endpoint_id))


def test_set_scopes_is_audited_with_before_and_after(world):
    changed = execute(
        endpoint_store.set_scopes(world.admin, world.sibling.endpoint_id, verbs=["claim"], queues=["a", "b"])
    )
    assert changed.scope_verbs == ("claim",) and changed.scope_queues == ("a", "b")
    last = [a for a in audit() if a["action"] == "endpoint.scopes"][-1]
    assert last["detail"]["queues"] == {"from": ["default"], "to": ["a", "b"]}
    with pytest.raises(Invalid):
        endpoint_store.set_scopes(world.admin, world.sibling.endpoint_id, verbs=["nope"], queues=["a"])


def test_default_lease_by_an_admin_and_by_the_endpoint_itself(world):
    ep = world.agent.endpoint_id
    assert execute(endpoint_store.set_default_lease(world.admin, ep, 120)).default_lease_ttl_seconds == 120
    assert execute(endpoint_store.set_default_lease(world.admin, ep, None)).default_lease_ttl_seconds is None
    assert execute(endpoint_store.set_own_default_lease(ep, 3600)).default_lease_ttl_seconds == 3600
    for bad in (59, 86401, True, "120"):
        with pytest.raises(Invalid) as info:
            endpoint_store.set_own_default_lease(ep, bad)
        assert info.value.field == "default_lease_ttl_seconds"
    assert endpoint_row(ep)["default_lease_ttl_seconds"] == 3600


def test_a_revoked_endpoint_cannot_be_changed_but_can_be_deleted(world):
    ep = world.agent.endpoint_id
    todo_id = execute(agent_store.create(world.agent, queue="default", title="x")).todo.id
    with pytest.raises(Conflict):
        execute(endpoint_store.delete(world.admin, ep))  # active: revoke first
    execute(endpoint_store.revoke(world.admin, ep))
    for stmt in (
        endpoint_store.rotate(world.admin, ep),
        endpoint_store.set_default_lease(world.admin, ep, 120),
        endpoint_store.set_scopes(world.admin, ep, verbs=["claim"], queues=["q"]),
        endpoint_store.set_own_default_lease(ep, 120),
    ):
        with pytest.raises(Conflict):
            execute(stmt)
    with pytest.raises(Forbidden):
        execute(endpoint_store.delete(world.human, ep))
    with pytest.raises(NotFound):
        execute(endpoint_store.delete(world.outsider, ep))
    execute(endpoint_store.delete(world.admin, ep))
    assert sql("SELECT count(*) AS n FROM endpoints WHERE id = %s", (ep,))[0]["n"] == 0
    assert row(todo_id) is None  # todos cascade with their endpoint
    assert [a["action"] for a in audit() if a["endpoint_id"] == ep][-1] == "endpoint.delete"


def test_touch_last_seen_writes_at_most_once_a_minute(world):
    ep = world.agent.endpoint_id
    execute(endpoint_store.touch_last_seen(ep))
    first = endpoint_row(ep)["last_seen_at"]
    execute(endpoint_store.touch_last_seen(ep))
    assert endpoint_row(ep)["last_seen_at"] == first
    sql("UPDATE endpoints SET last_seen_at = last_seen_at - interval '61 seconds' WHERE id = %s", (ep,))
    execute(endpoint_store.touch_last_seen(ep))
    assert endpoint_row(ep)["last_seen_at"] >= first  # stamped again: a minute had passed


def test_endpoint_ids_are_checked(world):
    for build in (
        lambda: endpoint_store.revoke(world.admin, "nope"),
        lambda: endpoint_store.rotate(world.admin, 5),
        lambda: endpoint_store.delete(world.admin, "x"),
    ):
        with pytest.raises(Invalid) as info:
            build()
        assert info.value.field == "endpoint"


# --- teams ------------------------------------------------------------------------------------


def test_create_team_and_refuse_a_taken_slug():
    team = execute(team_store.create_team(slug="ops", name=" Ops "))
    assert team.name == "Ops"
    with pytest.raises(Invalid) as info:
        execute(team_store.create_team(slug="ops", name="Again"))
    assert info.value.field == "slug"
    for slug, name, field in (("Bad Slug", "x", "slug"), ("ok", "", "name"), ("ok", "n" * 201, "name")):
        with pytest.raises(Invalid) as info:
            team_store.create_team(slug=slug, name=name)
        assert info.value.field == field
    assert [a["action"] for a in audit()] == ["team.create"]


def test_members_are_managed_by_team_admins_and_site_admins(world):
    newcomer = factories.user("nina")
    assert (
        execute(team_store.set_member(world.admin, team_id=world.team.id, user_id=newcomer.id, role="viewer"))
        == "added"
    )
    assert (
        execute(team_store.set_member(world.admin, team_id=world.team.id, user_id=newcomer.id, role="operator"))
        == "changed"
    )
    last = [a for a in audit() if a["action"] == "member.set"][-1]
    assert last["detail"] == {"user": "nina", "from": "viewer", "to": "operator"}
    with pytest.raises(Forbidden):
        execute(team_store.set_member(world.human, team_id=world.team.id, user_id=newcomer.id, role="admin"))
    with pytest.raises(Forbidden):
        execute(team_store.set_member(world.outsider, team_id=world.team.id, user_id=newcomer.id, role="admin"))
    assert (
        execute(
            team_store.set_member(
                world.outsider, team_id=world.team.id, user_id=newcomer.id, role="admin", superuser=True
            )
        )
        == "changed"
    )
    execute(team_store.remove_member(world.admin, team_id=world.team.id, user_id=newcomer.id))
    assert sql("SELECT count(*) AS n FROM team_members WHERE user_id = %s", (newcomer.id,))[0]["n"] == 0
    with pytest.raises(Conflict):
        execute(team_store.remove_member(world.admin, team_id=world.team.id, user_id=newcomer.id))


def test_membership_refusals(world):
    newcomer = factories.user("nils")
    cases = [
        (
            NotFound,
            lambda: team_store.set_member(
                None, team_id="00000000-0000-0000-0000-000000000000", user_id=newcomer.id, role="viewer"
            ),
        ),
        (Invalid, lambda: team_store.set_member(None, team_id=world.team.id, user_id=999999, role="viewer")),
        (Invalid, lambda: team_store.set_member(None, team_id=world.team.id, user_id=newcomer.id, role="owner")),
        (Invalid, lambda: team_store.set_member(None, team_id=world.team.id, user_id="5", role="viewer")),
        (Invalid, lambda: team_store.set_member(None, team_id="nope", user_id=newcomer.id, role="viewer")),
        (Forbidden, lambda: team_store.remove_member(world.viewer, team_id=world.team.id, user_id=world.human.user_id)),
    ]
    before = counts()
    for error, build in cases:
        with pytest.raises(error):
            execute(build())
    assert counts() == before
    newcomer.is_active = False
    newcomer.save()
    with pytest.raises(Invalid) as info:
        execute(team_store.set_member(None, team_id=world.team.id, user_id=newcomer.id, role="viewer"))
    assert info.value.field == "user"


def test_a_removed_member_loses_access_at_once(world):
    from todos.core.store import human as human_store

    todo_id = execute(agent_store.create(world.agent, queue="default", title="x")).todo.id
    execute(team_store.remove_member(world.admin, team_id=world.team.id, user_id=world.human.user_id))
    with pytest.raises(NotFound):
        execute(human_store.claim(world.human, todo_id))


# --- notifications, conditional rotation, site admins (the Endpoints screen) -------------------


def _endpoint_events(listener) -> list[dict]:
    return [payload for channel, payload in listener.drain() if channel == "board_events"]


def test_every_endpoint_change_notifies_the_board_once(world):
    ep = world.sibling.endpoint_id
    changes = [
        (
            "vend",
            lambda: (
                execute(
                    endpoint_store.vend(
                        world.admin, team_id=world.team.id, name="N", slug="noisy", verbs=["claim"], queues=["q"]
                    )
                ).endpoint.id
            ),
        ),
        ("scopes", lambda: execute(endpoint_store.set_scopes(world.admin, ep, verbs=["claim"], queues=["a"])).id),
        ("lease", lambda: execute(endpoint_store.set_default_lease(world.admin, ep, 120)).id),
        ("own lease", lambda: execute(endpoint_store.set_own_default_lease(ep, 300)).id),
        ("rotate", lambda: execute(endpoint_store.rotate(world.admin, ep)).endpoint.id),
    ]
    for label, change in changes:
        with listening("board_events") as listener:
            changed_id = change()
            events = _endpoint_events(listener)
        assert events == [
            {"op": "endpoint", "team": str(world.team.id), "ids": [], "queues": [], "endpoints": [str(changed_id)]}
        ], label
    execute(endpoint_store.revoke(world.admin, ep))
    with listening("board_events") as listener:
        execute(endpoint_store.delete(world.admin, ep))
        events = _endpoint_events(listener)
    assert events == [{"op": "endpoint", "team": str(world.team.id), "ids": [], "queues": [], "endpoints": [str(ep)]}]


def test_a_refused_endpoint_change_notifies_nobody(world):
    ep = world.agent.endpoint_id
    refused = [
        lambda: endpoint_store.vend(
            world.human, team_id=world.team.id, name="n", slug="refused", verbs=["claim"], queues=["q"]
        ),
        lambda: endpoint_store.vend(
            world.admin, team_id=world.team.id, name="n", slug="worker", verbs=["claim"], queues=["q"]
        ),  # taken
        lambda: endpoint_store.set_scopes(world.human, ep, verbs=["claim"], queues=["q"]),
        lambda: endpoint_store.set_default_lease(world.outsider, ep, 120),
        lambda: endpoint_store.rotate(world.admin, ep, if_prefix="bd_nope"),
        lambda: endpoint_store.delete(world.admin, ep),  # active
    ]
    with listening("board_events") as listener:
        for build in refused:
            with pytest.raises((Forbidden, NotFound, Invalid, Conflict)):
                execute(build())
        assert _endpoint_events(listener) == []


def test_last_seen_notifies_seen_only_when_it_stamps(world):
    ep = world.agent.endpoint_id
    with listening("board_events") as listener:
        execute(endpoint_store.touch_last_seen(ep))
        execute(endpoint_store.touch_last_seen(ep))  # within the minute: no write, no notice
        events = _endpoint_events(listener)
    assert events == [{"op": "seen", "team": str(world.team.id), "ids": [], "queues": [], "endpoints": [str(ep)]}]


def test_rotate_if_prefix_rotates_only_the_confirmed_token(world):
    ep = world.agent.endpoint_id
    before = endpoint_row(ep)
    with pytest.raises(Conflict) as info:
        execute(endpoint_store.rotate(world.admin, ep, if_prefix="bd_other00"))
    assert "changed meanwhile" in info.value.message
    assert bytes(endpoint_row(ep)["credential_hash"]) == bytes(before["credential_hash"])
    rotated = execute(endpoint_store.rotate(world.admin, ep, if_prefix=before["credential_prefix"]))
    assert endpoint_row(ep)["credential_prefix"] == rotated.token[:10]
    with pytest.raises(Conflict):  # the same confirmation posted again (a reload) rotates nothing
        execute(endpoint_store.rotate(world.admin, ep, if_prefix=before["credential_prefix"]))
    assert bytes(endpoint_row(ep)["credential_hash"]) == endpoint_store.token_hash(rotated.token)
    last = [a for a in audit() if a["action"] == "endpoint.rotate"][-1]
    assert last["detail"] == {"prefix": {"from": before["credential_prefix"], "to": rotated.token[:10]}}
    assert rotated.token not in str(last)
    execute(endpoint_store.revoke(world.admin, ep))
    with pytest.raises(Conflict) as info:
        execute(endpoint_store.rotate(world.admin, ep, if_prefix=rotated.token[:10]))
    assert info.value.message == "the endpoint is revoked"


def test_a_site_admin_manages_the_endpoints_of_teams_they_belong_to_only(world):
    root = factories.user("root", superuser=True)
    member_root = factories.member(world.team, root, "viewer")
    ep = world.sibling.endpoint_id
    # a member: any role, as a site admin, may manage (the caller vouches for is_superuser)
    with pytest.raises(Forbidden):
        execute(endpoint_store.set_default_lease(member_root, ep, 120))
    assert (
        execute(endpoint_store.set_default_lease(member_root, ep, 120, superuser=True)).default_lease_ttl_seconds == 120
    )
    vended = execute(
        endpoint_store.vend(
            member_root, team_id=world.team.id, name="R", slug="by-root", verbs=["claim"], queues=["q"], superuser=True
        )
    )
    assert vended.endpoint.created_by == root.id
    execute(endpoint_store.revoke(member_root, vended.endpoint.id, superuser=True))
    execute(endpoint_store.delete(member_root, vended.endpoint.id, superuser=True))
    # not a member: being a site admin does not reach another team's endpoints
    foreign = world.foreign_agent.endpoint_id
    before = counts()
    for build in (
        lambda: endpoint_store.set_default_lease(member_root, foreign, 120, superuser=True),
        lambda: endpoint_store.rotate(member_root, foreign, superuser=True),
        lambda: endpoint_store.revoke(member_root, foreign, superuser=True),
        lambda: endpoint_store.delete(member_root, foreign, superuser=True),
        lambda: endpoint_store.vend(
            member_root,
            team_id=world.foreign_team.id,
            name="x",
            slug="sneaky",
            verbs=["claim"],
            queues=["q"],
            superuser=True,
        ),
    ):
        with pytest.raises(NotFound):
            execute(build())
    assert counts() == before


def test_vend_for_a_team_one_is_not_in_is_not_found(world):
    with pytest.raises(NotFound):
        execute(
            endpoint_store.vend(
                world.outsider, team_id=world.team.id, name="n", slug="nosy", verbs=["claim"], queues=["q"]
            )
        )
    assert sql("SELECT count(*) AS n FROM endpoints WHERE slug = 'nosy'")[0]["n"] == 0

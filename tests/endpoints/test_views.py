"""The Endpoints screen through Django's test client: the list, vend and its one-time reveal,
scopes and lease, rotate, revoke, delete; who may do what; every refusal writes nothing."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests import factories
from tests.support.board import htmx, login, make
from tests.support.endpoints import endpoint, sql, token_of, vend, vend_data, written
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store
from todos.live.subscriptions import Subscription

pytestmark = pytest.mark.usefixtures("store_db")

ACTIONS = ("endpoint_edit", "endpoint_rotate", "endpoint_revoke", "endpoint_delete")


def page(response) -> str:
    return response.content.decode()


def audit(action: str) -> list[dict]:
    return sql("SELECT * FROM audit_log WHERE action = %s ORDER BY id", (action,))


def live_work(world):
    """acme-worker's todos: one of each live state in ``email`` and ``default``, plus finished ones."""
    todos = {
        "pending": make(world, "pending", queue="email"),
        "claimed": make(world, "claimed", queue="email"),
        "retry": make(world, "retry", queue="email"),
        "default": make(world, "pending", queue="default"),
        "done": make(world, "done", queue="email"),
        "dead": make(world, "dead", queue="email"),
    }
    return {k: t.id for k, t in todos.items()}


# --- the list ----------------------------------------------------------------------------------


def test_the_list_shows_every_field_and_no_controls_to_an_operator(world, alice_client):
    execute(endpoint_store.touch_last_seen(world.acme_ep.id))
    body = page(alice_client.get(reverse("endpoints")))
    assert 'data-live-page="endpoints"' in body and 'data-live-region="endpoints"' in body
    assert 'href="/endpoints/" aria-current="page"' in body  # the nav link
    row = re.search(r'<tr id="endpoint-acme-worker".*?</tr>', body, re.S).group(0)
    for text in (
        "acme-worker",
        "● active",
        "create_for, list_todos",
        "default",
        "email",
        "server default",
        world.acme_ep.credential_prefix + "…",
        " ago",
        "never",
    ):
        assert text in row, text
    assert "Acme" in body and "you: operator" in body
    assert "Vend an endpoint" not in body and "/edit/" not in body and "/rotate/" not in body and "/revoke/" not in body
    assert "globex" not in body.lower()


def test_admins_get_the_controls_and_revoked_endpoints_are_dimmed_with_a_delete_button(world, adam_client):
    execute(endpoint_store.revoke(None, world.acme_ep.id))
    factories.endpoint(
        world.acme,
        slug="acme-mailer",
        queues=("email",),
        lease=600,
        expires_at=datetime.now(UTC) + timedelta(days=7),
    )
    body = page(adam_client.get(reverse("endpoints")))
    assert "Vend an endpoint" in body and "/endpoints/new/?team=acme" in body
    mailer = re.search(r'<tr id="endpoint-acme-mailer".*?</tr>', body, re.S).group(0)
    assert 'class="endpoint-row"' in mailer and "600 s" in mailer and "data-countdown" in mailer
    assert (
        "/endpoints/acme-mailer/edit/" in mailer
        and "/endpoints/acme-mailer/revoke/" in mailer
        and "/delete/" not in mailer
    )
    revoked = re.search(r'<tr id="endpoint-acme-worker".*?</tr>', body, re.S).group(0)
    assert 'class="endpoint-row is-revoked"' in revoked and "⊘ revoked" in revoked and "<time" in revoked
    assert "/endpoints/acme-worker/delete/" in revoked and "/edit/" not in revoked and "/rotate/" not in revoked
    # revoked ones come after the active ones
    assert body.index('id="endpoint-acme-mailer"') < body.index('id="endpoint-acme-worker"')


def test_the_panel_is_the_live_region_alone(world, alice_client):
    response = alice_client.get(reverse("endpoints_panel"), **htmx())
    body = page(response)
    assert body.startswith('<section id="endpoints-panel" data-live-region="endpoints"')
    assert "acme-worker" in body and "<html" not in body


def test_the_page_listens_for_endpoint_changes_only():
    sub = Subscription.parse({"page": "endpoints"})
    for op in ("endpoint", "revoke", "seen"):
        assert sub.wants({"team": "t", "ids": [], "queues": [], "ops": [op], "endpoints": []}), op
    for op in ("claim", "heartbeat", "create", "membership"):
        assert not sub.wants({"team": "t", "ids": ["td_1"], "queues": ["q"], "ops": [op], "endpoints": []}), op


def test_a_site_admin_outside_every_team_sees_no_endpoints(world):
    root = login(factories.user("root", superuser=True))
    body = page(root.get(reverse("endpoints")))
    assert "acme-worker" not in body and "join a team" in body


def test_signed_out_visitors_are_sent_to_sign_in(world):
    from django.test import Client

    for url in (reverse("endpoints"), reverse("endpoint_vend"), reverse("endpoint_edit", args=["acme-worker"])):
        response = Client().get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- vend and the one-time reveal ----------------------------------------------------------


def test_the_vend_form_preselects_the_drain_verbs_and_offers_the_team_s_queues(world, adam_client):
    # a todo left in a queue the endpoint no longer has still makes the queue known
    execute(agent_store.create(world.agent, queue="email", title="x"))
    execute(
        endpoint_store.set_scopes(
            None, world.acme_ep.id, verbs=list(endpoint_store.SCOPE_VERBS), queues=["default", "reports"]
        )
    )
    body = page(adam_client.get(reverse("endpoint_vend"), {"team": "acme"}))
    checked = set(re.findall(r'name="scope_verbs" value="([a-z_]+)" checked', body))
    assert checked == set(endpoint_store.DRAIN_VERBS)
    assert set(re.findall(r'name="scope_verbs" value="([a-z_]+)"', body)) == set(endpoint_store.SCOPE_VERBS)
    assert re.findall(r'name="scope_queues" value="([^"]+)"', body) == ["default", "email", "reports"]
    assert "list_todos</strong> ⇒ get_todo" in body and "claim_next</strong> ⇒ claim_batch" in body
    assert "complete</strong> ⇒ complete_batch" in body
    assert "schedules</strong> ⇒ list_schedules, create_schedule" in body
    help_text = '<dt class="mono">schedules</dt><dd>its own periodic schedules: '
    assert help_text + "list_schedules, create_schedule, update_schedule" in body
    assert re.findall(r'name="lifetime" value="([a-z0-9]+)"', body) == ["never", "1h", "24h", "7d", "30d", "custom"]
    assert 'name="lifetime" value="never" checked' in body
    assert "globex" not in body.lower()


def test_vend_reveals_the_token_once_with_everything_needed_to_use_it(world, adam_client):
    before = datetime.now(UTC)
    response = vend(
        adam_client,
        name="CI fixer",
        scope_queues=["default"],
        scope_queues_extra="builds, ci  nightly",
        default_lease_ttl_seconds="600",
        lifetime="24h",
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    token = token_of(response)
    body = page(response)
    row = endpoint("ci-fixer")  # the slug derived from the name
    assert row["name"] == "CI fixer" and row["team_id"] == world.acme.id and row["created_by"] == world.adam_user.id
    assert row["scope_verbs"] == ["create_for", "claim_next", "complete"]
    assert row["scope_queues"] == ["builds", "ci", "default", "nightly"]
    assert row["default_lease_ttl_seconds"] == 600
    assert before + timedelta(hours=24) <= row["expires_at"] <= datetime.now(UTC) + timedelta(hours=24)
    assert bytes(row["credential_hash"]) == hashlib.sha256(token.encode()).digest()
    assert row["credential_prefix"] == token[:10]
    # the curl example, the worker configuration and the MCP client configuration
    base = "http://testserver"
    assert (
        f"curl -X POST {base}/api/v1/claim_next -H &#x27;Authorization: Bearer {token}&#x27; "
        "-H &#x27;Content-Type: application/json&#x27; -d &#x27;{&quot;wait_seconds&quot;: 30}&#x27;"
    ) in body
    assert (
        f"export BOARD_URL={base}\nexport BOARD_TOKEN={token}\nboard-worker --queue builds -- ./handle-todo.sh" in body
    )
    mcp = re.search(r'<pre id="mcp-config" class="json">(.*?)</pre>', body, re.S).group(1)
    config = json.loads(mcp.replace("&quot;", '"'))
    assert config["mcpServers"]["board"] == {
        "type": "http",
        "url": f"{base}/mcp/",
        "headers": {"Authorization": f"Bearer {token}"},
    }
    assert 'data-copy="token-value"' in body and "board/endpoints.js" in body
    # the worker needs heartbeat, fail and release, which this endpoint lacks: the page says so
    assert "This endpoint lacks heartbeat, fail, release" in body
    # the token is nowhere but in this one answer
    assert token not in str(sql("SELECT * FROM audit_log")) and token not in str(row)
    assert token not in str(dict(adam_client.session)) and token not in str(adam_client.cookies)
    [entry] = [a for a in audit("endpoint.vend") if a["user_id"] is not None]
    assert (
        entry["user_id"] == world.adam_user.id
        and entry["actor"] == "adam"
        and entry["detail"]["queues"] == ["builds", "ci", "default", "nightly"]
    )


def test_the_reveal_cannot_be_replayed(world, adam_client):
    token = token_of(vend(adam_client, name="Replay", slug="replay"))
    pages = [
        (reverse("endpoints"), {}),
        (reverse("endpoints_panel"), {}),
        (reverse("endpoint_vend"), {"team": "acme"}),
        *[(reverse(name, args=["replay"]), {}) for name in ("endpoint_edit", "endpoint_rotate", "endpoint_revoke")],
        (reverse("activity"), {}),
        (reverse("team_detail", args=["acme"]), {}),
        (reverse("agents"), {}),
    ]
    for url, params in pages:
        response = adam_client.get(url, params)
        assert response.status_code == 200, url
        assert token not in page(response) and token[10:20] not in page(response), url
    # posting the same form again (a reload of the reveal) vends nothing and shows no token
    again = vend(adam_client, name="Replay", slug="replay")
    assert again.status_code == 422 and "slug: &#x27;replay&#x27; is already taken" in page(again)
    assert "token-value" not in page(again)
    assert sql("SELECT count(*) AS n FROM endpoints WHERE slug = 'replay'")[0]["n"] == 1


def test_lifetimes(world, adam_client):
    for lifetime, span in (
        ("never", None),
        ("1h", timedelta(hours=1)),
        ("7d", timedelta(days=7)),
        ("30d", timedelta(days=30)),
    ):
        now = datetime.now(UTC)
        assert vend(adam_client, slug=f"life-{lifetime}", lifetime=lifetime).status_code == 200
        expires = endpoint(f"life-{lifetime}")["expires_at"]
        if span is None:
            assert expires is None
        else:
            assert abs(expires - (now + span)) < timedelta(seconds=30), lifetime
    assert vend(adam_client, slug="life-custom", lifetime="custom", expires_at="2099-03-04T05:06").status_code == 200
    assert endpoint("life-custom")["expires_at"] == datetime(2099, 3, 4, 5, 6, tzinfo=UTC)
    assert (
        vend(adam_client, slug="life-offset", lifetime="custom", expires_at="2099-03-04T05:06:00+02:00").status_code
        == 200
    )
    assert endpoint("life-offset")["expires_at"] == datetime(2099, 3, 4, 3, 6, tzinfo=UTC)


INVALID_VENDS = [
    ("scope_verbs", {"scope_verbs": ["claim", "drop_table"]}, "unknown verb"),
    ("scope_verbs", {"scope_verbs": []}, "at least one verb"),
    ("scope_queues", {"scope_queues": [], "scope_queues_extra": ""}, "at least one queue"),
    ("scope_queues", {"scope_queues_extra": "good bad/ -bad"}, "must be 1 to 128"),
    ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": "59"}, "from 60 to 86400"),
    ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": "86401"}, "from 60 to 86400"),
    ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": "ten"}, "whole number"),
    ("lifetime", {"lifetime": "forever"}, "must be one of"),
    ("expires_at", {"lifetime": "custom", "expires_at": ""}, "is required"),
    ("expires_at", {"lifetime": "custom", "expires_at": "next tuesday"}, "date and time"),
    ("expires_at", {"lifetime": "custom", "expires_at": "2001-01-01T00:00"}, "in the future"),
    ("expires_at", {"lifetime": "custom", "expires_at": "2030-13-45T99:00"}, "date and time"),
    ("name", {"name": ""}, "1 to 200"),
    ("slug", {"slug": "Not A Slug"}, "lowercase"),
    ("slug", {"slug": "acme-worker"}, "already taken"),
    ("slug", {"name": "¿?", "slug": ""}, "lowercase"),  # nothing to derive a slug from
]


@pytest.mark.parametrize(
    ("field", "change", "problem"), INVALID_VENDS, ids=[f"{c[0]}-{i}" for i, c in enumerate(INVALID_VENDS)]
)
def test_invalid_vends_name_the_field_and_write_nothing(world, adam_client, field, change, problem):
    before = written()
    response = vend(adam_client, **change)
    assert response.status_code == 422
    body = page(response)
    assert re.search(
        rf'<p class="form-error"[^>]*role="alert">{field}: [^<]*{re.escape(problem)}', body.replace("&#x27;", "'")
    ), body
    assert "token-value" not in body
    assert written() == before
    # the form comes back with what was typed
    assert 'name="team" value="acme"' in body


def test_vend_without_a_team_picks_the_only_team_one_administers_or_asks(world, adam_client, gina):
    assert 'name="team" value="acme"' in page(adam_client.get(reverse("endpoint_vend")))
    factories.member(world.globex, world.adam_user, "admin")
    both = page(adam_client.get(reverse("endpoint_vend")))
    assert "For which team?" in both and "?team=acme" in both and "?team=globex" in both


# --- who may -------------------------------------------------------------------------------


def _every_action(client, slug: str, *, team: str = "acme") -> list:
    """Every endpoint action, as a page and as its POST, plus vending for ``team``."""
    data = {"scope_verbs": ["claim"], "scope_queues": ["default"], "confirm": "narrow", "prefix": "x", "note": "n"}
    answers = [
        client.get(reverse("endpoint_vend"), {"team": team}),
        client.post(reverse("endpoint_vend"), vend_data(team=team, slug="nope-nope")),
    ]
    for name in ACTIONS:
        answers.append(client.get(reverse(name, args=[slug])))
        answers.append(client.post(reverse(name, args=[slug]), data))
    return answers


@pytest.mark.parametrize("who", ["alice", "vera"])
def test_operators_and_viewers_are_refused_every_action_with_403(world, who):
    client = login(getattr(world, f"{who}_user"))
    execute(
        endpoint_store.vend(None, team_id=world.acme.id, name="Gone", slug="acme-gone", verbs=["claim"], queues=["q"])
    )
    execute(endpoint_store.revoke(None, endpoint("acme-gone")["id"]))  # so delete has something to refuse too
    before = written()
    for slug in ("acme-worker", "acme-gone"):
        for response in _every_action(client, slug):
            assert response.status_code == 403, (response.request["PATH_INFO"], response.status_code)
            assert "Only a team admin can manage endpoints" in page(response)
    assert written() == before
    # the vend form without a team: they administer none
    assert client.get(reverse("endpoint_vend")).status_code == 403
    # as htmx too: a plain 403 with a toast
    response = client.post(reverse("endpoint_rotate", args=["acme-worker"]), {"prefix": "x"}, **htmx())
    assert response.status_code == 403 and "board:toast" in response["HX-Trigger"]


def test_another_team_s_admin_gets_the_same_404_as_for_nothing(world, gina):
    client = login(gina)
    before = written()
    foreign = _every_action(client, "acme-worker", team="acme")
    unknown = _every_action(client, "no-such-endpoint", team="no-such-team")
    for a, b in zip(foreign, unknown):
        assert a.status_code == b.status_code == 404, (a.request["PATH_INFO"], a.status_code, b.status_code)
        assert a.content == b.content
        assert b"acme" not in a.content.lower()
    assert written() == before
    # and their own team's endpoints are theirs to manage
    assert client.get(reverse("endpoint_edit", args=["globex-worker"])).status_code == 200


def test_a_site_admin_manages_only_the_teams_they_belong_to(world):
    root_user = factories.user("root", superuser=True)
    root = login(root_user)
    before = written()
    for response in _every_action(root, "acme-worker"):
        assert response.status_code == 404
    assert written() == before
    factories.member(world.acme, root_user, "viewer")  # a member now, with any role
    body = page(root.get(reverse("endpoints")))
    assert "Vend an endpoint" in body and "/endpoints/acme-worker/rotate/" in body and ">site admin</span>" in body
    prefix = endpoint("acme-worker")["credential_prefix"]
    response = root.post(reverse("endpoint_rotate", args=["acme-worker"]), {"prefix": prefix})
    assert response.status_code == 200 and endpoint("acme-worker")["credential_prefix"] == token_of(response)[:10]
    assert audit("endpoint.rotate")[-1]["user_id"] == root_user.id


def test_get_only_and_post_only_routes_refuse_other_methods(world, adam_client):
    assert adam_client.post(reverse("endpoints")).status_code == 405
    assert adam_client.post(reverse("endpoints_panel")).status_code == 405
    assert adam_client.put(reverse("endpoint_revoke", args=["acme-worker"])).status_code == 405


# --- scopes and default lease ----------------------------------------------------------------


def test_edit_shows_the_current_scopes(world, adam_client):
    execute(endpoint_store.set_default_lease(None, world.acme_ep.id, 900))
    body = page(adam_client.get(reverse("endpoint_edit", args=["acme-worker"])))
    assert set(re.findall(r'name="scope_verbs" value="([a-z_]+)" checked', body)) == set(endpoint_store.SCOPE_VERBS)
    assert set(re.findall(r'name="scope_queues" value="([^"]+)" checked', body)) == {"default", "email"}
    assert 'name="default_lease_ttl_seconds" type="number" min="60" max="86400" class="narrow" value="900"' in body


def test_edit_saves_scopes_and_lease_audited_from_what_to_what(world, adam_client):
    response = adam_client.post(
        reverse("endpoint_edit", args=["acme-worker"]),
        {
            "scope_verbs": ["claim_next", "complete"],
            "scope_queues": ["default", "email"],
            "scope_queues_extra": "reports",
            "default_lease_ttl_seconds": "120",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/endpoints/#endpoint-acme-worker"
    row = endpoint("acme-worker")
    assert (row["scope_verbs"], row["scope_queues"], row["default_lease_ttl_seconds"]) == (
        ["claim_next", "complete"],
        ["default", "email", "reports"],
        120,
    )
    [scopes] = audit("endpoint.scopes")
    assert scopes["user_id"] == world.adam_user.id and scopes["actor"] == "adam"
    assert scopes["detail"] == {
        "verbs": {"from": list(endpoint_store.SCOPE_VERBS), "to": ["claim_next", "complete"]},
        "queues": {"from": ["default", "email"], "to": ["default", "email", "reports"]},
    }
    [lease] = audit("endpoint.lease")
    assert lease["detail"] == {"from": None, "to": 120} and lease["user_id"] == world.adam_user.id
    assert "Saved acme-worker" in page(adam_client.get(reverse("endpoints")))
    # only what changed is written: the lease alone
    adam_client.post(
        reverse("endpoint_edit", args=["acme-worker"]),
        {
            "scope_verbs": ["claim_next", "complete"],
            "scope_queues": ["default", "email", "reports"],
            "default_lease_ttl_seconds": "",
        },
    )
    assert len(audit("endpoint.scopes")) == 1 and audit("endpoint.lease")[-1]["detail"] == {"from": 120, "to": None}
    # and nothing at all
    before = written()
    response = adam_client.post(
        reverse("endpoint_edit", args=["acme-worker"]),
        {
            "scope_verbs": ["claim_next", "complete"],
            "scope_queues": ["default", "email", "reports"],
        },
    )
    assert response.status_code == 302 and written() == before
    assert "Nothing changed on acme-worker" in page(adam_client.get(reverse("endpoints")))


def test_removing_queues_says_how_many_live_todos_sit_in_them_first(world, adam_client, alice_client):
    ids = live_work(world)
    before = written()
    data = {
        "scope_verbs": list(endpoint_store.SCOPE_VERBS),
        "scope_queues": ["default"],
        "default_lease_ttl_seconds": "",
    }
    response = adam_client.post(reverse("endpoint_edit", args=["acme-worker"]), data)
    assert response.status_code == 200
    body = page(response)
    assert "<strong>3 live todos</strong>" in body  # pending, claimed and retry in email; done and dead are not live
    assert '<span class="queue-name">email</span>: 3 live todos' in body
    assert "stay visible to Acme on the Board" in body and "the 1 it has claimed" in body
    assert written() == before  # asked, nothing saved yet
    assert 'name="confirm" value="narrow"' in body
    confirm = {**data, "confirm": "narrow"}
    assert adam_client.post(reverse("endpoint_edit", args=["acme-worker"]), confirm).status_code == 302
    assert endpoint("acme-worker")["scope_queues"] == ["default"]
    # the todos stay on the Board for the team
    listed = page(alice_client.get(reverse("todo_list"), {"queue": "email", "state": "all"}))
    for key in ("pending", "claimed", "retry", "done", "dead"):
        assert ids[key] in listed, key


def test_removing_an_empty_queue_still_asks_and_says_nothing_is_left_behind(world, adam_client):
    data = {"scope_verbs": ["claim"], "scope_queues": ["default"]}
    body = page(adam_client.post(reverse("endpoint_edit", args=["acme-worker"]), data))
    assert "<strong>0 live todos</strong>" in body and "Nothing is left behind" in body


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("scope_verbs", {"scope_verbs": ["nope"]}),
        ("scope_verbs", {"scope_verbs": []}),
        ("scope_queues", {"scope_queues": []}),
        ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": "30"}),
        ("default_lease_ttl_seconds", {"default_lease_ttl_seconds": "1.5"}),
    ],
)
def test_invalid_edits_name_the_field_and_write_nothing(world, adam_client, field, change):
    before = written()
    data = {"scope_verbs": ["claim"], "scope_queues": ["default", "email"], "default_lease_ttl_seconds": "", **change}
    response = adam_client.post(reverse("endpoint_edit", args=["acme-worker"]), data)
    assert response.status_code == 422
    assert f'role="alert">{field}: ' in page(response)
    assert written() == before


def test_a_revoked_endpoint_cannot_be_edited_rotated_or_revoked_again(world, adam_client):
    execute(endpoint_store.revoke(None, world.acme_ep.id))
    before = written()
    for name in ("endpoint_edit", "endpoint_rotate", "endpoint_revoke"):
        for call in (adam_client.get, adam_client.post):
            response = call(
                reverse(name, args=["acme-worker"]), {"scope_verbs": ["claim"], "scope_queues": ["q"], "prefix": "x"}
            )
            assert response.status_code == 302, name
    assert written() == before
    body = page(adam_client.get(reverse("endpoints")))  # the six messages, shown together
    assert body.count("acme-worker is revoked: its scopes no longer change.") == 2
    assert body.count("acme-worker is revoked: it has no token to rotate.") == 2
    assert body.count("acme-worker is already revoked.") == 2


# --- rotate ----------------------------------------------------------------------------------


def test_rotate_confirms_then_reveals_a_new_token_once(world, adam_client):
    old_prefix = endpoint("acme-worker")["credential_prefix"]
    confirm = page(adam_client.get(reverse("endpoint_rotate", args=["acme-worker"])))
    assert f'name="prefix" value="{old_prefix}"' in confirm and "stops working at once" in confirm
    response = adam_client.post(reverse("endpoint_rotate", args=["acme-worker"]), {"prefix": old_prefix})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    token = token_of(response)
    assert "New token for acme-worker" in page(response) and "The previous token stopped working at once" in page(
        response
    )
    row = endpoint("acme-worker")
    assert bytes(row["credential_hash"]) == hashlib.sha256(token.encode()).digest()
    assert audit("endpoint.rotate")[-1]["detail"] == {"prefix": {"from": old_prefix, "to": token[:10]}}
    # a reload posts the old confirmation again: nothing rotates, no token is shown
    again = adam_client.post(reverse("endpoint_rotate", args=["acme-worker"]), {"prefix": old_prefix})
    assert again.status_code == 302
    assert bytes(endpoint("acme-worker")["credential_hash"]) == hashlib.sha256(token.encode()).digest()
    listed = page(adam_client.get(reverse("endpoints")))
    assert "Not rotated: the token of acme-worker changed after you confirmed" in listed and token not in listed
    # a post without the confirmation rotates nothing either
    assert adam_client.post(reverse("endpoint_rotate", args=["acme-worker"])).status_code == 302
    assert bytes(endpoint("acme-worker")["credential_hash"]) == hashlib.sha256(token.encode()).digest()


# --- revoke and delete -----------------------------------------------------------------------


def test_revoke_states_what_will_be_dead_lettered_then_does_it_in_one_call(world, adam_client):
    ids = live_work(world)
    body = page(adam_client.get(reverse("endpoint_revoke", args=["acme-worker"])))
    assert "4 live todos will be dead-lettered" in body
    assert "2 pending, 1 claimed (their leases end now), 1 waiting for a retry" in body
    assert "Revoke and dead-letter 4" in body
    response = adam_client.post(reverse("endpoint_revoke", args=["acme-worker"]), {"note": "leaked in a log"})
    assert response.status_code == 302
    row = endpoint("acme-worker")
    assert row["state"] == "revoked" and row["revoked_at"] is not None
    states = {r["id"]: r for r in sql("SELECT id, state, next_retry_at, result FROM todos")}
    for key in ("pending", "claimed", "retry", "default"):
        todo = states[ids[key]]
        assert (todo["state"], todo["next_retry_at"], todo["result"]["error"]) == (
            "failed",
            None,
            "endpoint_revoked",
        ), key
    assert states[ids["done"]]["state"] == "done"
    held = sql("SELECT outcome, disposition FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (ids["claimed"],))
    assert [(a["outcome"], a["disposition"]) for a in held] == [("revoked", "dead_lettered")]
    [entry] = audit("endpoint.revoke")
    assert (entry["user_id"], entry["note"], entry["detail"]) == (
        world.adam_user.id,
        "leaked in a log",
        {"dead_lettered": 4},
    )
    assert "Revoked acme-worker: its token is refused from now on; 4 live todos dead-lettered." in page(
        adam_client.get(reverse("endpoints"))
    )


def test_a_too_long_revoke_note_is_refused_naming_the_field(world, adam_client):
    before = written()
    response = adam_client.post(reverse("endpoint_revoke", args=["acme-worker"]), {"note": "x" * 2001})
    assert response.status_code == 422 and 'role="alert">note: must be at most 2000 characters' in page(response)
    assert written() == before


def test_delete_needs_a_revoked_endpoint_and_takes_its_todos_with_it(world, adam_client):
    ids = live_work(world)
    before = written()
    assert adam_client.get(reverse("endpoint_delete", args=["acme-worker"])).status_code == 302
    assert adam_client.post(reverse("endpoint_delete", args=["acme-worker"])).status_code == 302
    assert "Revoke acme-worker before deleting it." in page(adam_client.get(reverse("endpoints")))
    assert written() == before
    execute(endpoint_store.revoke(None, world.acme_ep.id))
    body = page(adam_client.get(reverse("endpoint_delete", args=["acme-worker"])))
    assert "6 todos and their attempt history are deleted with it" in body
    assert adam_client.post(reverse("endpoint_delete", args=["acme-worker"])).status_code == 302
    assert endpoint("acme-worker") is None
    assert sql("SELECT count(*) AS n FROM todos WHERE id = ANY(%s)", (list(ids.values()),))[0]["n"] == 0
    assert audit("endpoint.delete")[-1]["detail"] == {"slug": "acme-worker"}
    listed = page(adam_client.get(reverse("endpoints")))
    assert "Deleted acme-worker and its todos." in listed and 'id="endpoint-acme-worker"' not in listed

"""The Board's side of run later and concurrency keys: the Scheduled tab with countdowns, run now /
reschedule / edit from the drawer (each audited with old and new values), concurrency keys on rows,
drawer and overview, and setting a key's limit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.factories import relayed
from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store

pytestmark = pytest.mark.usefixtures("store_db")


def later(seconds: int = 3600) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def todo(todo_id: str) -> dict:
    with connect() as conn:
        return conn.execute("SELECT * FROM todos WHERE id = %s", (todo_id,)).fetchone()


def last_audit(todo_id: str) -> dict:
    with connect() as conn:
        return conn.execute(
            "SELECT * FROM audit_log WHERE todo_id = %s ORDER BY id DESC LIMIT 1", (todo_id,)
        ).fetchone()


def limit_of(key: str) -> int:
    with connect() as conn:
        return conn.execute("SELECT max_claimed FROM concurrency_keys WHERE key = %s", (key,)).fetchone()["max_claimed"]


def post(client, name, todo_id, data=None, **headers):
    return client.post(reverse(name, args=[todo_id]), data or {}, **headers)


def test_the_scheduled_tab_lists_scheduled_work_with_a_countdown(world, alice_client):
    make(world, "pending", title="nightly report", run_at=later())
    plain = make(world, "pending", title="right now")
    relayed()
    body = alice_client.get(reverse("todo_list"), {"state": "scheduled"}).content.decode()
    assert "nightly report" in body and "right now" not in body
    assert "data-countdown" in body and "runs" in body
    assert "state-scheduled" in body
    pending = alice_client.get(reverse("todo_list"), {"state": "pending"}).content.decode()
    assert "right now" in pending and "nightly report" not in pending
    counts = alice_client.get(reverse("todo_counts"), {"state": "scheduled"}).content.decode()
    assert "Scheduled" in counts
    assert plain.id


def test_run_now_from_the_drawer(world, alice_client):
    t = make(world, "pending", run_at=later())
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert "Run now" in drawer and "Scheduled" in drawer and "/reschedule/" in drawer and "Edit…" in drawer
    response = post(alice_client, "todo_run_now", t.id, {"fragment": "drawer"}, **htmx("drawer"))
    assert response.status_code == 200
    assert todo(t.id)["next_retry_at"] is None
    assert last_audit(t.id)["action"] == "todo.run_now"
    again = post(alice_client, "todo_run_now", t.id, {"fragment": "drawer"}, **htmx("drawer"))
    assert again.status_code == 409


def test_reschedule_takes_the_forms_utc_time_and_refuses_the_past(world, alice_client):
    t = make(world, "pending")
    when = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    response = post(
        alice_client,
        "todo_reschedule",
        t.id,
        {"fragment": "drawer", "run_at": when.strftime("%Y-%m-%dT%H:%M")},
        **htmx(),
    )
    assert response.status_code == 200
    assert todo(t.id)["next_retry_at"] == when.replace(second=0)
    bad = post(alice_client, "todo_reschedule", t.id, {"fragment": "drawer", "run_at": "2020-01-01T10:00"}, **htmx())
    assert bad.status_code == 422 and "run_at" in bad.content.decode()
    assert todo(t.id)["next_retry_at"] == when.replace(second=0)


def test_edit_saves_the_form_and_audits_only_what_changed(world, alice_client):
    t = make(world, "pending", title="old", payload={"n": 1}, priority=2)
    form = {
        "fragment": "drawer",
        "title": "new",
        "payload": '{"n": 2}',
        "priority": "2",
        "max_attempts": str(t.max_attempts),
        "assignee": "",
        "run_at": "",
    }
    response = post(alice_client, "todo_edit", t.id, form, **htmx("drawer"))
    assert response.status_code == 200, response.content.decode()[:500]
    row = todo(t.id)
    assert (row["title"], row["payload"], row["priority"]) == ("new", {"n": 2}, 2)
    detail = last_audit(t.id)["detail"]
    assert detail == {"old": {"title": "old", "payload": {"n": 1}}, "new": {"title": "new", "payload": {"n": 2}}}
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert "todo.edit" in drawer


def test_edit_refuses_bad_json_naming_the_field_and_writes_nothing(world, alice_client):
    t = make(world, "pending", title="keep")
    response = post(
        alice_client,
        "todo_edit",
        t.id,
        {"fragment": "drawer", "title": "changed", "payload": "{nope", "priority": "0", "max_attempts": "5"},
        **htmx("drawer"),
    )
    assert response.status_code == 422 and "payload" in response.content.decode()
    assert todo(t.id)["title"] == "keep"


def test_edit_sets_and_clears_the_requirements_of_a_scheduled_todo_audited(world, alice_client):
    t = make(world, "scheduled", title="later", requires=["gpu"])
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert 'name="requires"' in drawer and 'value="gpu"' in drawer
    form = {"fragment": "drawer", "title": "later", "requires": "region:eu, gpu arm64"}
    response = post(alice_client, "todo_edit", t.id, form, **htmx("drawer"))
    assert response.status_code == 200, response.content.decode()[:500]
    row = todo(t.id)
    assert row["requires"] == ["arm64", "gpu", "region:eu"] and row["next_retry_at"] is not None
    assert last_audit(t.id)["detail"] == {
        "old": {"requires": ["gpu"]},
        "new": {"requires": ["arm64", "gpu", "region:eu"]},
    }
    cleared = post(alice_client, "todo_edit", t.id, {"fragment": "drawer", "requires": ""}, **htmx("drawer"))
    assert cleared.status_code == 200
    assert todo(t.id)["requires"] == []


def test_edit_refuses_bad_requirements_naming_the_field_and_writes_nothing(world, alice_client):
    from todos.core.errors import Invalid
    from todos.core.store import waiting

    t = make(world, "pending", title="keep", requires=["gpu"])
    form = {"fragment": "drawer", "title": "changed", "requires": "gpu bad!label"}
    response = post(alice_client, "todo_edit", t.id, form, **htmx("drawer"))
    assert response.status_code == 422 and "requires: label 2: must be letters, digits" in response.content.decode()
    assert (todo(t.id)["title"], todo(t.id)["requires"]) == ("keep", ["gpu"])
    with pytest.raises(Invalid) as refused:
        execute(waiting.edit(world.alice, t.id, {"requires": "gpu"}))
    assert (refused.value.field, refused.value.problem) == ("requires", "must be a list of labels")
    with pytest.raises(Invalid) as refused:
        execute(waiting.edit(world.alice, t.id, {"requires": ["ok", ""]}))
    assert refused.value.field == "requires[1]"
    # once claimed, the worker holds what it read: no edit
    claimed = make(world, "claimed", requires=["gpu"])
    clear = {"fragment": "drawer", "requires": ""}
    refused_claimed = post(alice_client, "todo_edit", claimed.id, clear, **htmx("drawer"))
    assert refused_claimed.status_code == 409 and todo(claimed.id)["requires"] == ["gpu"]


def test_a_payload_with_secrets_is_not_offered_for_editing(world, alice_client):
    t = make(world, "pending", payload={"api_key": "s3cret"})
    drawer = alice_client.get(reverse("todo_drawer", args=[t.id]), **htmx("drawer")).content.decode()
    assert "s3cret" not in drawer and "edit it through the API" in drawer


def test_viewers_get_no_waiting_work_actions(world, vera_client):
    t = make(world, "pending", run_at=later())
    response = post(vera_client, "todo_run_now", t.id, {"fragment": "drawer"}, **htmx("drawer"))
    assert response.status_code == 403
    assert todo(t.id)["next_retry_at"] is not None


def test_keys_show_on_rows_drawer_and_the_overview_with_what_waits(world, alice_client):
    first = make(world, "pending", title="deploy one", concurrency_key="deploy:prod")
    make(world, "pending", title="deploy two", concurrency_key="deploy:prod")
    execute(agent_store.claim_next(world.agent))
    relayed()
    rows = alice_client.get(reverse("todo_list")).content.decode()
    assert '<span class="visually-hidden">Concurrency key </span>deploy:prod' in rows
    drawer = alice_client.get(reverse("todo_drawer", args=[first.id]), **htmx("drawer")).content.decode()
    assert "Concurrency key" in drawer and "deploy:prod" in drawer
    overview = alice_client.get(reverse("overview")).content.decode()
    assert "Concurrency keys at their limit" in overview
    assert "1 / 1" in overview and "deploy two" in overview


def test_setting_a_key_limit_from_the_overview(world, alice_client, vera_client):
    response = alice_client.post(
        reverse("concurrency_limit"), {"team": "acme", "key": "sync:c1", "limit": "3"}, **htmx("overview-table")
    )
    assert response.status_code == 200
    assert "may now have 3 claimed" in json.dumps(json.loads(response["HX-Trigger"]))
    with connect() as conn:
        assert (
            conn.execute("SELECT max_claimed FROM concurrency_keys WHERE key = 'sync:c1'").fetchone()["max_claimed"]
            == 3
        )
    bad = alice_client.post(reverse("concurrency_limit"), {"team": "acme", "key": "sync:c1", "limit": "0"}, **htmx())
    assert bad.status_code == 422
    denied = vera_client.post(reverse("concurrency_limit"), {"team": "acme", "key": "sync:c1", "limit": "5"}, **htmx())
    assert denied.status_code == 403
    with connect() as conn:
        assert (
            conn.execute("SELECT max_claimed FROM concurrency_keys WHERE key = 'sync:c1'").fetchone()["max_claimed"]
            == 3
        )

"""The action table: each action has its route, the drawer offers exactly the table's actions for
the todo's situation (one form each, asking first where the table says so), and a viewer gets none."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.support.board import htmx, make
from todos.core.db import connect
from todos.dashboard.views.action_table import TABLE

pytestmark = pytest.mark.usefixtures("store_db")

# What the drawer offered before the table (todos/dashboard/views/present.py's hand-written branches).
OFFERED = {
    "pending": {"claim", "cancel", "assign", "priority", "reschedule", "edit"},
    # waiting work can be run now (when scheduled), rescheduled and edited
    "scheduled": {"run_now", "cancel", "assign", "priority", "reschedule", "edit"},
    "mine": {"complete", "fail", "release", "extend", "cancel", "priority"},
    "lapsed": {"claim", "force_release", "cancel", "priority"},
    "claimed": {"force_release", "cancel", "priority"},
    "retry": {"retry", "cancel", "priority"},
    "dead": {"retry", "cancel", "priority"},
    "done": set(),
    "canceled": set(),
}


def test_every_action_has_its_route():
    for action in TABLE:
        assert reverse(action.url_name, args=["td_1"]) == f"/todos/td_1/{action.path}/"
    assert [a.name for a in TABLE] == list(dict.fromkeys(a.name for a in TABLE))  # no name twice


def drawer_forms(client, todo_id: str) -> dict[str, str]:
    """The drawer's action forms, keyed by the action their URL names."""
    body = client.get(reverse("todo_drawer", args=[todo_id]), **htmx("drawer")).content.decode()
    forms = re.findall(r'<form method="post" action="/todos/td_[0-9a-f]+/([a-z-]+)/"[^>]*>', body)
    tags = re.findall(r'<form method="post" action="/todos/td_[0-9a-f]+/[a-z-]+/"[^>]*>', body)
    return {path.replace("-", "_"): tag for path, tag in zip(forms, tags)}


@pytest.mark.parametrize("situation", sorted(OFFERED))
def test_the_drawer_offers_the_tables_actions_for_the_situation(world, alice_client, vera_client, situation):
    todo = make(world, "claimed" if situation == "lapsed" else situation)
    if situation == "lapsed":
        with connect() as conn:
            conn.execute("UPDATE todos SET lease_expires_at = now() - interval '5 seconds' WHERE id = %s", (todo.id,))
    forms = drawer_forms(alice_client, todo.id)
    assert set(forms) == OFFERED[situation]
    assert [a.name for a in TABLE if a.name in forms] == list(forms)  # in the table's order
    body = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert "hx-confirm" not in body  # never the browser's confirm(): the Board's own dialog
    dialogs = dict(
        re.findall(
            r'<dialog id="([a-z_]+)-confirm-td_[0-9a-f]+" class="confirm-dialog"[^>]*>\s*<p[^>]*>([^<]*)</p>', body
        )
    )
    expected = {}
    if "cancel" in forms:
        expected["cancel"] = "Cancel this todo for good? It will not run, and a canceled todo cannot be retried."
    if "force_release" in forms:
        expected["force_release"] = (
            "Take the lease away from acme-worker? The todo goes back to pending, and its attempt is recorded as"
            " force-released by you; acme-worker can no longer report on it."
        )
    assert dialogs == expected
    assert drawer_forms(vera_client, todo.id) == {}  # a viewer: no actions at all

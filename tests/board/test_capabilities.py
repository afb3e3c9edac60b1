"""Required capabilities on the Board: requirements on the todo row and in the drawer,
default capabilities on the endpoint forms (vend and edit, audited, refused naming the field), and
the claimability warning for waiting work that needs labels its owner does not have."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests import factories
from tests.support.board import login, make
from tests.support.endpoints import endpoint, sql, vend, written
from todos.core.db import connect, execute
from todos.core.selectors import claimability
from todos.core.selectors.access import viewer_for
from todos.core.store import endpoints as endpoint_store

pytestmark = pytest.mark.usefixtures("store_db")


def page(response) -> str:
    return response.content.decode()


def stuck_of(user) -> dict:
    fresh = get_user_model().objects.get(pk=user.pk)  # viewer_for caches on the user object
    return {(s.endpoint_slug, s.queue, s.reason): s for s in claimability.stuck_work(viewer_for(fresh))}


def row_of(body: str, todo_id: str) -> str:
    row = body[body.index(f'id="todo-{todo_id}"') :]
    return row[: row.index("</tr>")]


# --- the row and the drawer --------------------------------------------------------------------


def test_the_row_and_drawer_show_the_requirements(world, alice_client):
    bound = make(world, "pending", title="render", requires=["gpu", "cuda"])
    plain = make(world, "pending", title="plain")
    body = page(alice_client.get(reverse("todo_list")))
    assert "needs cuda, gpu" in row_of(body, bound.id)
    assert "needs " not in row_of(body, plain.id)
    drawer = page(alice_client.get(reverse("todo_detail", args=[bound.id]), HTTP_HX_REQUEST="true"))
    assert "<dt>Requires</dt>" in drawer
    assert '<span class="tag tag-cap mono">cuda</span> <span class="tag tag-cap mono">gpu</span>' in drawer
    assert "The endpoint's defaults lack cuda, gpu." in drawer
    execute(endpoint_store.set_capabilities(None, world.acme_ep.id, ["gpu", "cuda"]))
    drawer = page(alice_client.get(reverse("todo_detail", args=[bound.id]), HTTP_HX_REQUEST="true"))
    assert "default capabilities: cuda, gpu" in drawer and "defaults lack" not in drawer
    plain_drawer = page(alice_client.get(reverse("todo_detail", args=[plain.id]), HTTP_HX_REQUEST="true"))
    assert "(any claim takes it)" in plain_drawer


# --- the endpoint forms ------------------------------------------------------------------------


def test_vend_and_edit_set_default_capabilities_audited(world, adam_client):
    response = vend(adam_client, name="GPU box", slug="gpu-box", capabilities="gpu, region:eu  cuda")
    assert response.status_code == 200
    assert endpoint("gpu-box")["capabilities"] == ["cuda", "gpu", "region:eu"]
    listing = page(adam_client.get(reverse("endpoints")))
    row = re.search(r'<tr id="endpoint-gpu-box".*?</tr>', listing, re.S).group(0)
    assert "capabilities:" in row and '<span class="tag tag-cap mono">region:eu</span>' in row
    form = page(adam_client.get(reverse("endpoint_edit", args=["gpu-box"])))
    assert 'name="capabilities" class="mono" autocomplete="off" value="cuda gpu region:eu"' in form
    data = {"scope_verbs": ["claim_next", "complete", "create_for"], "scope_queues": ["default"]}
    response = adam_client.post(reverse("endpoint_edit", args=["gpu-box"]), {**data, "capabilities": "gpu"})
    assert response.status_code == 302
    assert endpoint("gpu-box")["capabilities"] == ["gpu"]
    [changed] = sql("SELECT * FROM audit_log WHERE action = 'endpoint.capabilities'")
    assert changed["detail"] == {"from": ["cuda", "gpu", "region:eu"], "to": ["gpu"]} and changed["actor"] == "adam"
    assert "default capabilities gpu" in page(adam_client.get(reverse("endpoints")))
    # the same again writes nothing
    before = written()
    adam_client.post(reverse("endpoint_edit", args=["gpu-box"]), {**data, "capabilities": "gpu"})
    assert written() == before


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (" ".join(f"l{n}" for n in range(17)), "must list at most 16 labels, got 17"),
        ("gpu " + "x" * 65, "label 2: must be at most 64 characters, got 65"),
        ("gpu;rm", "label 1: must be letters, digits"),
    ],
)
def test_bad_default_capabilities_name_the_field_and_write_nothing(world, adam_client, value, problem):
    before = written()
    data = {"scope_verbs": ["claim"], "scope_queues": ["default", "email"], "capabilities": value}
    response = adam_client.post(reverse("endpoint_edit", args=["acme-worker"]), data)
    assert response.status_code == 422
    assert f'role="alert">capabilities: {problem}' in page(response)
    assert written() == before
    response = vend(adam_client, name="Bad caps", slug="bad-caps", capabilities=value)
    assert response.status_code == 422 and 'role="alert">capabilities: ' in page(response)
    assert sql("SELECT count(*) AS n FROM endpoints WHERE slug = 'bad-caps'")[0]["n"] == 0


# --- the claimability warning ------------------------------------------------------------------


def test_work_needing_capabilities_its_owner_lacks_is_flagged_with_the_missing_labels(world, alice_client):
    execute(endpoint_store.set_capabilities(None, world.acme_ep.id, ["gpu"]))
    covered = make(world, "pending", title="gpu only", requires=["gpu"])
    short = make(world, "pending", title="gpu and eu", requires=["gpu", "region:eu"])
    make(world, "retry", title="arm", requires=["arm64"], max_attempts=3)
    make(world, "pending", title="plain")
    factories.relayed()
    stuck = stuck_of(world.alice_user)
    assert list(stuck) == [("acme-worker", "default", "missing_capabilities")]
    group = stuck[("acme-worker", "default", "missing_capabilities")]
    assert (group.pending, group.retry, group.missing) == (1, 1, ("arm64", "region:eu"))
    assert "need capabilities no endpoint that could claim them has: arm64, region:eu" in group.explanation
    assert "default capabilities are gpu" in group.explanation
    assert group.fixes[0].label == "Give acme-worker the default capabilities arm64, region:eu"
    assert group.fixes[0].url == reverse("endpoint_edit", args=["acme-worker"])
    # the overview says it; the list marks only the rows it holds
    overview = page(alice_client.get(reverse("overview")))
    assert "need capabilities no endpoint that could claim them has: arm64, region:eu" in overview
    body = page(alice_client.get(reverse("todo_list")))
    assert "⚠ no agent can claim" in row_of(body, short.id)
    assert "⚠ no agent can claim" not in row_of(body, covered.id)
    # an admin gets the fix as a link; giving the labels clears the flag
    adam = page(login(world.adam_user).get(reverse("overview")))
    assert f'href="{reverse("endpoint_edit", args=["acme-worker"])}"' in adam
    execute(endpoint_store.set_capabilities(None, world.acme_ep.id, ["gpu", "region:eu", "arm64"]))
    assert stuck_of(world.alice_user) == {}


def test_scheduled_work_needing_capabilities_its_owner_lacks_is_flagged(world, alice_client):
    later = make(world, "scheduled", title="gpu, later", requires=["gpu"])
    make(world, "scheduled", title="plain, later")
    factories.relayed()
    group = stuck_of(world.alice_user)[("acme-worker", "default", "missing_capabilities")]
    assert (group.pending, group.retry, group.scheduled, group.missing) == (0, 0, 1, ("gpu",))
    body = page(alice_client.get(reverse("todo_list"), {"state": "scheduled"}))
    assert "⚠ no agent can claim" in row_of(body, later.id)


def test_people_of_another_team_do_not_see_it(world, bob_client):
    make(world, "pending", requires=["gpu"])
    assert stuck_of(world.bob_user) == {}
    assert "need capabilities" not in page(bob_client.get(reverse("overview")))


def test_the_capability_check_reads_only_capability_bound_waiting_rows(world):
    """Many plain pending todos: the query walks the partial index of rows that need something."""
    with connect() as conn:
        conn.execute(
            """INSERT INTO todos (id, endpoint_id, queue, title)
               SELECT 'td_' || lpad(to_hex(g), 32, '0'), %s, 'default', 'bulk'
               FROM generate_series(1, 50000) g""",
            (world.acme_ep.id,),
        )
        conn.execute("ANALYZE todos")
    factories.recount()
    viewer = viewer_for(world.alice_user)
    params = {"eps": viewer.endpoint_ids, "queue": None, "claim_verbs": list(claimability.CLAIM_VERBS)}
    with connect() as conn:
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + claimability.CAPABILITIES_SQL, params).fetchone()
    text = json.dumps(plan)
    assert "todos_requires_waiting" in text and "todos_pending" not in text, text


# --- a todo made by hand -----------------------------------------------------------------------


def test_a_todo_made_by_hand_may_require_capabilities(world, alice_client):
    target = f"{world.acme_ep.id}|default"
    assert 'name="requires"' in page(alice_client.get(reverse("todo_new")))
    response = alice_client.post(reverse("todo_new"), {"target": target, "title": "render", "requires": "gpu, cuda"})
    assert response.status_code == 302
    todo_id = response["Location"].split("/")[2]
    assert sql("SELECT requires FROM todos WHERE id = %s", (todo_id,))[0]["requires"] == ["cuda", "gpu"]
    for value, problem in (
        (" ".join(f"l{n}" for n in range(17)), "requires: must list at most 16 labels, got 17"),
        ("gpu " + "x" * 65, "requires: label 2: must be at most 64 characters, got 65"),
    ):
        bad = alice_client.post(reverse("todo_new"), {"target": target, "title": "x", "requires": value})
        assert bad.status_code == 422 and f'role="alert">{problem}' in page(bad)
    assert sql("SELECT count(*) AS n FROM todos")[0]["n"] == 1

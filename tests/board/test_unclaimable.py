"""Work no agent can claim: the overview and the todo list say which waiting todos their owning
endpoint cannot take, why, and how to fix it; people see only their own teams' such work."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests import factories
from tests.support.board import login, make
from todos.core.db import connect, execute
from todos.core.selectors import claimability
from todos.core.selectors.access import viewer_for
from todos.core.store import agent as agent_store
from todos.core.store import endpoints as endpoint_store

pytestmark = pytest.mark.usefixtures("store_db")

PRODUCER_VERBS = ("create_for", "list_todos", "get_todo")


def stuck_of(user, **narrow) -> dict[tuple[str, str], claimability.Stuck]:
    fresh = get_user_model().objects.get(pk=user.pk)  # viewer_for caches on the user object
    return {(s.endpoint_slug, s.queue): s for s in claimability.stuck_work(viewer_for(fresh), **narrow)}


@pytest.fixture
def stuck_world(world):
    """acme: a producer-only endpoint with work in `default` (which acme-worker claims), worker
    work in `email` after `email` left the worker's scope, and an expired endpoint's work."""
    producer = factories.agent(
        factories.endpoint(world.acme, slug="acme-producer", queues=("default", "reports"), verbs=PRODUCER_VERBS)
    )
    execute(agent_store.create(producer, queue="default", title="made by the producer"))
    execute(agent_store.create(producer, queue="reports", title="nobody claims reports"))
    make(world, "pending", queue="email", title="an email")
    make(world, "pending", title="healthy work")  # acme-worker claims default: not flagged
    execute(
        endpoint_store.set_scopes(None, world.acme_ep.id, verbs=list(endpoint_store.SCOPE_VERBS), queues=["default"])
    )
    ending = factories.endpoint(
        world.acme, slug="acme-temp", queues=("batch",), expires_at=datetime.now(UTC) + timedelta(hours=1)
    )
    execute(agent_store.create(factories.agent(ending), queue="batch", title="batch job"))
    with connect() as conn:  # the lifetime ran out; the expiry sweep has not run yet
        conn.execute("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE slug = 'acme-temp'")
    make(world, "pending", agent=world.globex_agent, title="globex work")
    factories.relayed()
    return world


def test_each_reason_with_its_fix(stuck_world):
    stuck = stuck_of(stuck_world.alice_user)
    assert set(stuck) == {
        ("acme-producer", "default"),
        ("acme-producer", "reports"),
        ("acme-worker", "email"),
        ("acme-temp", "batch"),
    }
    producer = stuck[("acme-producer", "default")]
    assert producer.reason == "no_claim_verb" and producer.pending == 1 and producer.claimers == ("acme-worker",)
    assert "cannot claim" in producer.explanation
    labels = [fix.label for fix in producer.fixes]
    assert labels[0] == "Give acme-producer the claim_next verb"
    assert "Retarget: have producers pass endpoint=acme-worker to create_for" in labels[1]
    assert producer.fixes[0].url == reverse("endpoint_edit", args=["acme-producer"])
    reports = stuck[("acme-producer", "reports")]
    assert reports.claimers == () and "Vend an endpoint that claims reports" in reports.fixes[1].label
    assert reports.fixes[1].url == reverse("endpoint_vend") + "?team=acme"
    email = stuck[("acme-worker", "email")]
    assert email.reason == "queue_out_of_scope" and "outside acme-worker's queues (default)" in email.explanation
    assert email.fixes[0].label == "Widen acme-worker's queues to include email"
    assert stuck[("acme-temp", "batch")].reason == "expired"
    assert stuck[("acme-temp", "batch")].fixes[-1].url == (
        reverse("todo_list") + "?team=acme&endpoint=acme-temp&queue=batch&state=pending"
    )
    # narrowed like the todo list
    assert set(stuck_of(stuck_world.alice_user, endpoint="acme-producer")) == {
        ("acme-producer", "default"),
        ("acme-producer", "reports"),
    }
    assert set(stuck_of(stuck_world.alice_user, queue="email")) == {("acme-worker", "email")}
    assert stuck_of(stuck_world.alice_user, team="globex") == {}


def test_fixing_the_cause_clears_the_flag(stuck_world):
    producer_id = next(e.id for e in viewer_for(stuck_world.alice_user).endpoints if e.slug == "acme-producer")
    execute(
        endpoint_store.set_scopes(
            None, producer_id, verbs=[*PRODUCER_VERBS, "claim_next"], queues=["default", "reports"]
        )
    )
    assert ("acme-producer", "default") not in stuck_of(stuck_world.alice_user)
    execute(
        endpoint_store.set_scopes(
            None, stuck_world.acme_ep.id, verbs=list(endpoint_store.SCOPE_VERBS), queues=["default", "email"]
        )
    )
    assert set(stuck_of(stuck_world.alice_user)) == {("acme-temp", "batch")}


def test_a_revoked_owner_and_retry_waiting_work(world):
    from todos.core.store import human as human_store

    agent = factories.agent(factories.endpoint(world.acme, slug="acme-old", queues=("default",)))
    make(world, "retry", agent=agent, max_attempts=3)
    pending = make(world, "pending", agent=agent)
    with connect() as conn:  # a fixture shortcut: revoking through the store dead-letters live work
        conn.execute("UPDATE endpoints SET state = 'revoked', revoked_at = now() WHERE slug = 'acme-old'")
    factories.relayed()
    stuck = stuck_of(world.alice_user)[("acme-old", "default")]
    assert (stuck.reason, stuck.pending, stuck.retry, stuck.waiting) == ("revoked", 1, 1, 2)
    assert "was revoked" in stuck.explanation
    assert stuck.todos_url.endswith("state=pending")
    execute(human_store.cancel(world.alice, pending.id))
    factories.relayed()
    only_retry = stuck_of(world.alice_user)[("acme-old", "default")]
    assert (only_retry.pending, only_retry.retry) == (0, 1) and only_retry.todos_url.endswith("state=retry")


def test_the_overview_flags_it_with_reasons_and_fixes(stuck_world, alice_client):
    page = alice_client.get(reverse("overview")).content.decode()
    assert "Work no agent can claim" in page
    assert "Their endpoint acme-producer cannot claim" in page
    assert "Queue email is outside acme-worker&#x27;s queues (default)." in page
    assert "has expired" in page
    # operators and viewers read the fixes, without links to pages that would refuse them…
    assert "A team admin can fix it: give acme-producer the claim_next verb" in page
    assert f'href="{reverse("endpoint_edit", args=["acme-producer"])}"' not in page
    vera = login(stuck_world.vera_user).get(reverse("overview")).content.decode()
    assert "Their endpoint acme-producer cannot claim" in vera and "A team admin can fix it" in vera
    # …and the team's admins get them as links to the right page
    adam = login(stuck_world.adam_user).get(reverse("overview")).content.decode()
    assert f'href="{reverse("endpoint_edit", args=["acme-producer"])}"' in adam
    assert "Widen acme-worker&#x27;s queues to include email" in adam
    assert f'href="{reverse("endpoint_vend")}?team=acme"' in adam
    # the live region (the table fragment) carries it too
    assert "Work no agent can claim" in alice_client.get(reverse("overview_table")).content.decode()


def test_the_todo_list_flags_the_rows_and_the_filtered_groups(stuck_world, alice_client):
    page = alice_client.get(reverse("todo_list")).content.decode()
    assert "Work no agent can claim" in page
    assert page.count("⚠ no agent can claim") == 4  # producer ×2, email, batch; not the healthy row
    email_only = alice_client.get(reverse("todo_list"), {"queue": "email"}).content.decode()
    assert "outside acme-worker" in email_only and "acme-producer" not in email_only.split("Work no agent")[1][:2000]
    healthy = alice_client.get(reverse("todo_list"), {"endpoint": "acme-worker", "queue": "default"}).content.decode()
    assert "Work no agent can claim" not in healthy and "⚠ no agent can claim" not in healthy
    done = alice_client.get(reverse("todo_list"), {"state": "done"}).content.decode()
    assert "Work no agent can claim" not in done


def test_people_see_only_their_teams_stuck_work(stuck_world, bob_client):
    assert stuck_of(stuck_world.bob_user) == {}
    for name in ("overview", "todo_list"):
        body = bob_client.get(reverse(name)).content.decode()
        assert "Work no agent can claim" not in body and "acme-producer" not in body, name
    # globex's own producer-made work is flagged for globex
    producer = factories.agent(factories.endpoint(stuck_world.globex, slug="globex-producer", verbs=PRODUCER_VERBS))
    execute(agent_store.create(producer, queue="default", title="globex handed in"))
    factories.relayed()
    assert set(stuck_of(stuck_world.bob_user)) == {("globex-producer", "default")}
    assert set(stuck_of(stuck_world.alice_user)) == {
        ("acme-producer", "default"),
        ("acme-producer", "reports"),
        ("acme-worker", "email"),
        ("acme-temp", "batch"),
    }


def test_the_check_never_reads_todos(stuck_world):
    """Grouped by (owner, queue) from the relay's counts: its plan touches todo_counts and
    endpoints only, however many todos there are."""
    viewer = viewer_for(stuck_world.alice_user)
    params = {"eps": viewer.endpoint_ids, "queue": None, "claim_verbs": list(claimability.CLAIM_VERBS)}
    with connect() as conn:
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + claimability.STUCK_SQL, params).fetchone()
    relations = set()

    def walk(node):
        if isinstance(node, dict):
            if "Relation Name" in node:
                relations.add(node["Relation Name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(json.dumps(plan)))
    assert relations == {"todo_counts", "endpoints"}


def test_work_reserved_for_an_endpoint_that_does_not_own_it(world, alice_client):
    from todos.core.store import human as human_store

    other = factories.endpoint(world.acme, slug="acme-other", queues=("default",))
    reserved = make(world, "pending", title="reserved elsewhere")
    make(world, "pending", title="free work")
    mine = make(world, "pending", title="reserved for its owner")
    execute(human_store.assign(world.alice, reserved.id, f"endpoint:{other.endpoint.id}"))
    execute(human_store.assign(world.alice, mine.id, f"endpoint:{world.acme_ep.id}"))
    stuck = stuck_of(world.alice_user)
    assert list(stuck) == [("acme-worker", "default")]
    group = stuck[("acme-worker", "default")]
    assert (group.reason, group.pending, group.assignee_slug) == ("assigned_elsewhere", 1, "acme-other")
    assert "assigned to endpoint acme-other, but only their owner acme-worker claims them" in group.explanation
    assert group.fixes[0].url.startswith(reverse("todo_list"))
    page = alice_client.get(reverse("todo_list")).content.decode()
    assert page.count("⚠ no agent can claim") == 1  # only the reserved row, not its queue's others
    row = page[page.index(f'id="todo-{reserved.id}"') :]
    assert "⚠ no agent can claim" in row[: row.index("</tr>")]
    execute(human_store.assign(world.alice, reserved.id, None))
    assert stuck_of(world.alice_user) == {}


def test_reservations_are_read_from_the_assignee_index(world):
    """Many unreserved pending todos: the reservation query walks the partial assignee index
    (assigned rows only), not the pending ones."""
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
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + claimability.ASSIGNED_SQL, params).fetchone()
    text = json.dumps(plan)
    assert "todos_assignee_state_created" in text and "todos_pending" not in text, text


def test_work_scheduled_to_run_later_is_stuck_as_well(world, alice_client):
    """Scheduled work (pending with a time ahead) of an owner that cannot claim it waits forever
    once it comes due: it is flagged now, counted apart, and its row carries the mark."""
    producer = factories.agent(
        factories.endpoint(world.acme, slug="acme-producer", queues=("default",), verbs=PRODUCER_VERBS)
    )
    later = make(world, "scheduled", agent=producer, title="run later")
    factories.relayed()
    stuck = stuck_of(world.alice_user)[("acme-producer", "default")]
    assert (stuck.reason, stuck.pending, stuck.retry, stuck.scheduled, stuck.waiting) == ("no_claim_verb", 0, 0, 1, 1)
    assert stuck.todos_url.endswith("state=scheduled")
    overview = alice_client.get(reverse("overview")).content.decode()
    assert "1 scheduled: stuck when they come due" in overview
    listed = alice_client.get(reverse("todo_list"), {"state": "scheduled"}).content.decode()
    assert "Work no agent can claim" in listed
    row = listed[listed.index(f'id="todo-{later.id}"') :]
    assert "⚠ no agent can claim" in row[: row.index("</tr>")]


def test_scheduled_work_reserved_elsewhere_is_stuck_as_well(world):
    from todos.core.store import human as human_store

    other = factories.endpoint(world.acme, slug="acme-other", queues=("default",))
    later = make(world, "scheduled", title="reserved, later")
    execute(human_store.assign(world.alice, later.id, f"endpoint:{other.endpoint.id}"))
    group = stuck_of(world.alice_user)[("acme-worker", "default")]
    assert (group.reason, group.pending, group.scheduled) == ("assigned_elsewhere", 0, 1)


def test_work_of_an_endpoint_whose_claims_are_paused_names_the_pause(world, alice_client):
    make(world, "pending", title="waits for the pause to end")
    factories.relayed()
    assert ("acme-worker", "default") not in stuck_of(world.alice_user)
    execute(endpoint_store.pause_claims(None, world.acme_ep.id, superuser=True))
    paused = stuck_of(world.alice_user)[("acme-worker", "default")]
    assert paused.reason == "claims_paused" and paused.pending == 1
    assert "acme-worker are paused" in paused.explanation
    assert [fix.label for fix in paused.fixes] == [
        "Resume acme-worker's claims on the Agents page",
        "Take or cancel them by hand",
    ]
    assert paused.fixes[0].url == reverse("agents")
    body = alice_client.get(reverse("overview")).content.decode()
    assert "A team admin can fix it: resume acme-worker&#x27;s claims on the Agents page" in body
    adam = login(world.adam_user).get(reverse("overview")).content.decode()
    assert f'<a href="{reverse("agents")}">Resume acme-worker&#x27;s claims on the Agents page</a>' in adam
    execute(endpoint_store.resume_claims(None, world.acme_ep.id, superuser=True))
    assert ("acme-worker", "default") not in stuck_of(world.alice_user)


def test_blocked_work_is_counted_as_blocked_not_scheduled(world, alice_client):
    """A blocked todo (pending, waiting on its parents) of an owner that cannot claim it is stuck
    once its parents are done: it is counted as blocked, never as scheduled, for every reason."""
    producer = factories.agent(
        factories.endpoint(world.acme, slug="acme-producer", queues=("default",), verbs=PRODUCER_VERBS)
    )
    parent = make(world, "pending", agent=producer, title="the parent")
    child = make(world, "pending", agent=producer, title="its child", after=[parent.id])
    # reserved for another endpoint, and needing a capability nobody has: each waiting on a parent
    other = factories.endpoint(world.acme, slug="acme-other", queues=("email",))
    gate = make(world, "pending", queue="email", title="a parent in email")
    reserved = make(world, "pending", queue="email", title="reserved child", after=[gate.id])
    from todos.core.store import human as human_store

    execute(human_store.assign(world.alice, reserved.id, f"endpoint:{other.endpoint.id}"))
    make(world, "pending", queue="email", title="gpu child", after=[gate.id], requires=["gpu"])
    factories.relayed()
    stuck = stuck_of(world.alice_user)
    produced = stuck[("acme-producer", "default")]
    assert (produced.reason, produced.pending, produced.scheduled, produced.blocked, produced.waiting) == (
        "no_claim_verb", 1, 0, 1, 2,
    )  # fmt: skip
    by_reason = {s.reason: s for s in claimability.stuck_work(viewer_for(world.alice_user)) if s.queue == "email"}
    for reason in ("assigned_elsewhere", "missing_capabilities"):
        group = by_reason[reason]
        assert (group.pending, group.scheduled, group.blocked) == (0, 0, 1), reason
        assert group.todos_url.endswith("state=blocked")
    overview = alice_client.get(reverse("overview")).content.decode()
    assert "scheduled: stuck when they come due" not in overview
    assert "1 blocked: stuck once their parents are done" in overview
    listed = alice_client.get(reverse("todo_list"), {"state": "blocked"}).content.decode()
    row = listed[listed.index(f'id="todo-{child.id}"') :]
    assert "⚠ no agent can claim" in row[: row.index("</tr>")]

"""The Blocked tab's bulk run anyway: "Run selected anyway" and "Run all matching anyway…", each
previewed with its count, started as a bulk job, worked in chunks by the loop body and audited
per todo; what stopped being blocked meanwhile is skipped and reported."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.board.test_bulk import audit_count, audits_per_todo, job_id_of, work
from tests.factories import relayed
from tests.store.helpers import listening
from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.errors import Invalid
from todos.core.store import agent as agent_store
from todos.core.store import bulk_jobs as job_store
from todos.core.store import human as human_store
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db", "no_seen_stamps")


def blocked(world, parent, *, agent=None, **kwargs):
    return execute(
        agent_store.create(agent or world.agent, queue="default", title="waits", after=[parent.id], **kwargs)
    ).todo


def states(ids) -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT id, todo_board_state(state, next_retry_at) AS s FROM todos WHERE id = ANY(%s)", (list(ids),)
        ).fetchall()
    return {r["id"]: r["s"] for r in rows}


def test_the_blocked_tab_offers_run_anyway_for_the_selection_and_all_matching(world, alice_client):
    blocked(world, make(world, "pending"))
    relayed()  # "… all matching" is offered by the tab's count, which the relay keeps
    page = alice_client.get(reverse("todo_list"), {"state": "blocked"}).content.decode()
    assert 'value="run_anyway:selected"' in page and "Run selected anyway" in page
    assert 'value="run_anyway:matching"' in page and "Run all matching anyway…" in page
    other = alice_client.get(reverse("todo_list"), {"state": "pending"}).content.decode()
    assert "run_anyway:" not in other


def test_an_empty_blocked_tab_offers_no_all_matching_run_anyway(world, alice_client):
    make(world, "pending")
    relayed()
    page = alice_client.get(reverse("todo_list"), {"state": "blocked"}).content.decode()
    assert "run_anyway:matching" not in page


def test_run_all_matching_anyway_previews_then_runs_each_once_audited_and_wakes_agents(world, alice_client):
    parent = make(world, "pending")
    waiting = [blocked(world, parent) for _ in range(3)]
    foreign = blocked(world, make(world, "pending", agent=world.globex_agent), agent=world.globex_agent)
    preview = alice_client.post(
        reverse("bulk_preview"), {"plan": "run_anyway:matching", "state": "blocked"}, **htmx("bulk-panel")
    )
    body = preview.content.decode()
    assert preview.status_code == 200
    assert "Run anyway all todos matching state Blocked?" in body
    assert "3 todos can be run without their parents." in body and "Run anyway 3" in body
    assert set(states(t.id for t in waiting).values()) == {"blocked"}  # a preview changes nothing

    response = alice_client.post(
        reverse("bulk_start"), {"action": "run_anyway", "scope": "matching", "state": "blocked", "note": "go"}
    )
    assert response.status_code == 302
    with listening("board_ready") as listener:
        job = work(world.alice_user, job_id_of(response))
        woken = [p for channel, p in listener.drain() if channel == "board_ready"]
    assert (job.state, job.changed, job.skipped) == ("done", 3, 0)
    assert states(t.id for t in waiting) == {t.id: "pending" for t in waiting}
    assert sum(p["n"] for p in woken) == 3
    assert audits_per_todo("todo.run_anyway") == {t.id: 1 for t in waiting}
    assert states([foreign.id]) == {foreign.id: "blocked"}
    page = alice_client.get(reverse("bulk_job", args=[job.id])).content.decode()
    assert "Run anyway all todos matching state Blocked" in page and "finished" in page


def test_run_selected_anyway_skips_what_moved_and_reports_it(world, alice_client):
    parent = make(world, "pending")
    chosen = [blocked(world, parent) for _ in range(2)]
    moved = blocked(world, parent)
    execute(human_store.run_anyway(world.alice, moved.id))
    ids = [t.id for t in chosen] + [moved.id]
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "run_anyway:selected", "ids": ids}, **htmx())
    body = preview.content.decode()
    assert "3 selected todos" in body and "2 of them can be run without their parents now; the rest" in body
    response = alice_client.post(reverse("bulk_start"), {"plan": "run_anyway:selected", "ids": ids}, **htmx())
    job = work(world.alice_user, job_id_of(response))
    assert (job.changed, job.skipped) == (2, 1)
    assert [s.id for s in job.skipped_sample] == [moved.id]
    assert audit_count("todo.run_anyway") == 3  # two by the job, one by hand before it


def test_a_blocked_todo_with_its_own_time_comes_back_scheduled(world, alice_client):
    parent = make(world, "pending")
    later = blocked(world, parent, delay_seconds=3600)
    response = alice_client.post(reverse("bulk_start"), {"plan": "run_anyway:selected", "ids": [later.id]}, **htmx())
    work(world.alice_user, job_id_of(response))
    assert states([later.id]) == {later.id: "scheduled"}


def test_a_viewer_cannot_preview_or_start_and_a_group_refuses_run_anyway(world, vera_client):
    parent = make(world, "pending")
    child = blocked(world, parent)
    for url in ("bulk_preview", "bulk_start"):
        response = vera_client.post(reverse(url), {"plan": "run_anyway:selected", "ids": [child.id]})
        assert response.status_code == 403
    assert states([child.id]) == {child.id: "blocked"}
    with pytest.raises(Invalid) as exc:
        job_store.create(
            OperatorScope(user_id=world.alice_user.pk, username="alice"),
            action="run_anyway",
            scope="group",
            description="x",
            group_reason="boom",
        )
    assert exc.value.field == "action"
    with pytest.raises(Invalid) as exc:
        job_store.create(
            OperatorScope(user_id=world.alice_user.pk, username="alice"),
            action="run_later",
            scope="selected",
            description="x",
            selected_ids=[child.id],
        )
    assert exc.value.field == "action" and "run_anyway" in exc.value.problem

"""The Scheduled tab's bulk actions: "Run selected now", "Run all matching now…" and "Cancel all
matching…", each previewed with its count, started as a bulk job, worked in chunks by the loop
body and audited per todo; a dead-letter group refuses "run now" naming why."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.board.test_bulk import audit_count, audits_per_todo, job_count, job_id_of, work
from tests.factories import relayed
from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.errors import Invalid
from todos.core.store import bulk_jobs as job_store
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db", "no_seen_stamps")


def waiting_times(ids) -> dict[str, object]:
    with connect() as conn:
        rows = conn.execute("SELECT id, next_retry_at FROM todos WHERE id = ANY(%s)", (list(ids),)).fetchall()
    return {r["id"]: r["next_retry_at"] for r in rows}


def test_the_scheduled_tab_offers_run_now_and_cancel_all_matching(world, alice_client):
    make(world, "scheduled")
    relayed()  # "… all matching" is offered by the tab's count, which the relay keeps
    page = alice_client.get(reverse("todo_list"), {"state": "scheduled"}).content.decode()
    assert 'value="run_now:selected"' in page and "Run selected now" in page
    assert 'value="run_now:matching"' in page and "Run all matching now…" in page
    assert 'value="cancel:matching"' in page and "Cancel all matching…" in page
    # run now belongs to the Scheduled tab: the Dead letters tab offers no run now
    make(world, "dead")
    dead = alice_client.get(reverse("todo_list"), {"state": "dead"}).content.decode()
    assert "run_now:" not in dead


def test_an_empty_scheduled_tab_offers_no_all_matching_action(world, alice_client):
    make(world, "pending")
    page = alice_client.get(reverse("todo_list"), {"state": "scheduled"}).content.decode()
    assert "run_now:matching" not in page and "cancel:matching" not in page


def test_run_all_matching_now_previews_then_runs_each_once_audited(world, alice_client):
    later = [make(world, "scheduled", title=f"later {i}") for i in range(4)]
    now = make(world, "pending")  # pending with no time: not on the tab, not touched
    foreign = make(world, "scheduled", agent=world.globex_agent)  # another team's: never counted
    preview = alice_client.post(
        reverse("bulk_preview"), {"plan": "run_now:matching", "state": "scheduled"}, **htmx("bulk-panel")
    )
    body = preview.content.decode()
    assert preview.status_code == 200
    assert "Run now all todos matching state Scheduled?" in body and "4 todos can be run now." in body
    assert 'name="action" value="run_now"' in body and "Run now 4" in body
    assert all(waiting_times([t.id for t in later]).values())  # a preview changes nothing

    response = alice_client.post(
        reverse("bulk_start"), {"action": "run_now", "scope": "matching", "state": "scheduled", "note": "go"}
    )
    assert response.status_code == 302
    job = work(world.alice_user, job_id_of(response))
    assert (job.state, job.changed, job.skipped) == ("done", 4, 0)
    assert waiting_times([t.id for t in later]) == {t.id: None for t in later}
    assert audits_per_todo("todo.run_now") == {t.id: 1 for t in later}
    assert waiting_times([foreign.id])[foreign.id] is not None
    assert now.id not in audits_per_todo("todo.run_now")
    page = alice_client.get(reverse("bulk_job", args=[job.id])).content.decode()
    assert "Run now all todos matching state Scheduled" in page and "finished" in page


def test_run_selected_now_skips_what_moved_and_reports_it(world, alice_client):
    chosen = [make(world, "scheduled") for _ in range(3)]
    claimed = make(world, "claimed")
    ids = [t.id for t in chosen] + [claimed.id]
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "run_now:selected", "ids": ids}, **htmx())
    body = preview.content.decode()
    assert "4 selected todos" in body and "3 of them can be run now; the rest will be skipped." in body
    response = alice_client.post(reverse("bulk_start"), {"plan": "run_now:selected", "ids": ids}, **htmx())
    assert response.status_code == 200 and 'id="bulk-job-' in response.content.decode()
    job = work(world.alice_user, job_id_of(response))
    assert (job.changed, job.skipped) == (3, 1)
    assert [s.id for s in job.skipped_sample] == [claimed.id]
    assert audit_count("todo.run_now") == 3


def test_cancel_all_matching_on_the_scheduled_tab_cancels_only_scheduled_todos(world, alice_client):
    later = [make(world, "scheduled") for _ in range(2)]
    plain = make(world, "pending")
    preview = alice_client.post(
        reverse("bulk_preview"), {"plan": "cancel:matching", "state": "scheduled"}, **htmx("bulk-panel")
    )
    assert "2 todos can be canceled." in preview.content.decode()
    response = alice_client.post(reverse("bulk_start"), {"action": "cancel", "scope": "matching", "state": "scheduled"})
    job = work(world.alice_user, job_id_of(response))
    assert (job.changed, job.skipped) == (2, 0)
    assert set(audits_per_todo("todo.cancel")) == {t.id for t in later}
    assert plain.id not in audits_per_todo("todo.cancel")


GROUP_REFUSAL = "action: a dead-letter group cannot be run now: only scheduled todos can (retry the group instead)"


def test_a_dead_letter_group_refuses_run_now_and_writes_nothing(world, alice_client):
    make(world, "dead")
    for url in ("bulk_preview", "bulk_start"):
        response = alice_client.post(
            reverse(url), {"plan": "run_now:group", "state": "dead", "group": "boom on <id>"}, **htmx()
        )
        assert response.status_code == 400 and GROUP_REFUSAL in response.content.decode()
        page = alice_client.post(reverse(url), {"action": "run_now", "scope": "group", "group": "boom"})
        assert page.status_code == 400 and GROUP_REFUSAL in page.content.decode()
    with pytest.raises(Invalid) as refused:
        execute(
            job_store.create(
                OperatorScope(world.alice_user.id, "alice"),
                action="run_now",
                scope="group",
                group_reason="boom",
                description="d",
            )
        )
    assert refused.value.message == GROUP_REFUSAL
    assert job_count() == 0


def test_a_viewer_cannot_run_now_in_bulk(world, vera_client):
    todo = make(world, "scheduled")
    assert vera_client.post(reverse("bulk_preview"), {"plan": "run_now:selected", "ids": [todo.id]}).status_code == 403
    assert vera_client.post(reverse("bulk_start"), {"plan": "run_now:selected", "ids": [todo.id]}).status_code == 403
    assert job_count() == 0 and waiting_times([todo.id])[todo.id] is not None

"""Bulk retry and cancel: preview count, background job in chunks of ≤ 500 ids, audited,
a report of changed vs skipped; dead letters grouped by failure reason."""

from __future__ import annotations

import json
import time

import pytest

from django.urls import reverse

from tests.board.conftest import htmx, make
from tests.factories import recount
from todos import bulk
from todos.db import connect, execute
from todos.store import operator as O

pytestmark = pytest.mark.usefixtures("store_db")

REASONS = [
    "timeout after {n}s talking to 10.0.{n}.7",
    "HTTP 503 from upstream req-{hex}",
    "user {uuid} not found",
]


def insert_dead_letters(endpoint_id, n: int, *, queue: str = "default") -> None:
    """n dead letters in one statement (a fixture shortcut: production writes go through the store).
    Reasons cycle through REASONS with varying numbers, hex and UUIDs."""
    with connect() as conn:
        conn.execute(
            """
INSERT INTO todos (id, endpoint_id, queue, title, state, attempt, max_attempts, result, created_at, updated_at, completed_at)
SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), %(ep)s, %(queue)s, 'dead letter #' || i, 'failed', 5, 5,
       jsonb_build_object('error', CASE i %% 3
           WHEN 0 THEN 'timeout after ' || (i %% 60) || 's talking to 10.0.' || (i %% 250) || '.7'
           WHEN 1 THEN 'HTTP 503 from upstream req-a1' || substr(md5(i::text), 1, 12)
           ELSE 'user ' || gen_random_uuid() || ' not found' END),
       now() - i * interval '1 millisecond', now(), now()
FROM generate_series(1, %(n)s) AS i""",
            {"ep": endpoint_id, "n": n, "queue": queue},
        )
    recount()


def audit_count(action: str) -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM audit_log WHERE action = %s", (action,)).fetchone()["n"]


def states() -> dict[str, int]:
    with connect() as conn:
        rows = conn.execute("SELECT state, count(*) AS n FROM todos GROUP BY state").fetchall()
    return {r["state"]: r["n"] for r in rows}


@pytest.mark.slow
def test_bulk_retry_of_ten_thousand_dead_letters_in_chunks(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 10_000)
    make(world, "pending")  # not a dead letter: never touched

    preview = alice_client.post(reverse("bulk_preview"), {"plan": "retry:matching", "state": "dead"}, **htmx("bulk-panel"))
    assert preview.status_code == 200
    body = preview.content.decode()
    assert "10,000 todos can be retried." in body and "Retry 10,000" in body
    assert 'name="scope" value="matching"' in body and 'name="state" value="dead"' in body
    assert states()["failed"] == 10_000  # a preview changes nothing

    # Half-way through, someone cancels 100 of the rows the job has not reached yet (the oldest).
    with connect() as conn:
        late = [r["id"] for r in conn.execute(
            "SELECT id FROM todos WHERE state = 'failed' ORDER BY created_at ASC, id ASC LIMIT 100").fetchall()]
    sizes: list[int] = []
    original = bulk.run_chunk

    def chunk_and_interfere(job, scope, ids):
        sizes.append(len(ids))
        if len(sizes) == 2:
            execute(O.cancel_many(world.adam, late))
        return original(job, scope, ids)

    monkeypatch.setattr(bulk, "run_chunk", chunk_and_interfere)
    started = time.monotonic()
    response = alice_client.post(reverse("bulk_start"), {"action": "retry", "scope": "matching", "state": "dead", "note": "mass retry"}, **htmx("bulk-panel"))
    assert response.status_code == 200
    job_id = response.content.decode().split('id="bulk-job-')[1].split('"')[0]
    job = bulk.get(job_id, world.alice_user.id)
    assert job.wait(120), "the job did not finish in bounded time"
    elapsed = time.monotonic() - started
    assert elapsed < 60, f"bulk retry of 10,000 took {elapsed:.1f}s"
    assert job.state == "finished", job.error
    assert job.total == 10_000
    assert max(sizes) <= 500 and len(sizes) == 20
    assert job.changed == 9_900 and job.skipped == 100
    assert set(job.skipped_sample) <= set(late)
    assert audit_count("todo.retry") == job.changed
    assert states() == {"pending": 9_901, "canceled": 100}

    # the job's fragment reports it (and tells the page to refresh the list)
    report = alice_client.get(reverse("bulk_job", args=[job_id]), **htmx())
    text = report.content.decode()
    assert "9,900</strong> changed" in text and "100</strong> skipped" in text
    assert "hx-trigger" not in text  # stops polling
    trigger = json.loads(report["HX-Trigger"])
    assert "board:bulk-finished" in trigger and "9,900 changed, 100 skipped" in trigger["board:toast"]["items"][0]["message"]
    # and without JavaScript the same report is a page
    page = alice_client.get(reverse("bulk_job", args=[job_id]))
    assert b"<html" in page.content and b"9,900</strong> changed" in page.content and b'http-equiv="refresh"' not in page.content


def test_bulk_cancel_of_a_selection_reports_rows_whose_state_moved(world, alice_client):
    pending = [make(world, "pending", title=f"p{i}") for i in range(3)]
    done = make(world, "done")
    ids = [t.id for t in pending] + [done.id]
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:selected", "ids": ids}, **htmx())
    body = preview.content.decode()
    assert "4 selected todos" in body and "3 of them can be canceled now; the rest will be skipped." in body
    # between the preview and the confirmation, one pending todo is claimed and completed elsewhere
    execute(O.claim(world.adam, pending[0].id))
    execute(O.complete(world.adam, pending[0].id))
    response = alice_client.post(reverse("bulk_start"), {"action": "cancel", "scope": "selected", "ids": ids})
    assert response.status_code == 302
    job = bulk.get(response["Location"].rstrip("/").split("/")[-1], world.alice_user.id)
    assert job.wait(30)
    assert (job.changed, job.skipped) == (2, 2)
    assert set(job.skipped_sample) == {pending[0].id, done.id}
    assert audit_count("todo.cancel") == 2


def test_bulk_errors_name_the_field(world, alice_client, vera_client):
    response = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:selected"}, **htmx())
    assert response.status_code == 400 and "ids: select at least one todo first" in response.content.decode()
    response = alice_client.post(reverse("bulk_preview"), {"plan": "explode:selected", "ids": ["x"]}, **htmx())
    assert response.status_code == 400 and "action: must be retry or cancel" in response.content.decode()
    response = alice_client.post(reverse("bulk_preview"), {"action": "retry", "scope": "everything"})
    assert response.status_code == 400 and b"scope: must be selected, matching or group" in response.content
    response = alice_client.post(reverse("bulk_preview"), {"plan": "retry:group"})
    assert response.status_code == 400 and b"group: choose a failure-reason group" in response.content
    todo = make(world, "dead")
    assert vera_client.post(reverse("bulk_preview"), {"plan": "retry:selected", "ids": [todo.id]}).status_code == 403
    assert vera_client.post(reverse("bulk_start"), {"plan": "retry:selected", "ids": [todo.id]}).status_code == 403


def test_someone_elses_job_is_not_found(world, alice_client):
    from tests.board.conftest import login

    todo = make(world, "dead")
    response = alice_client.post(reverse("bulk_start"), {"action": "retry", "scope": "selected", "ids": [todo.id]})
    job_id = response["Location"].rstrip("/").split("/")[-1]
    assert bulk.get(job_id, world.alice_user.id).wait(30)
    adam = login(world.adam_user)  # same team, but not the one who started it
    assert adam.get(reverse("bulk_job", args=[job_id])).status_code == 404
    assert alice_client.get(reverse("bulk_job", args=[job_id])).status_code == 200


def test_dead_letters_grouped_by_normalised_reason(world, alice_client):
    insert_dead_letters(world.acme_ep.id, 300)
    todo = make(world, "dead")  # reason from its last attempt's summary: "boom on <hex>"
    page = alice_client.get(reverse("dead_letter_groups"))
    body = page.content.decode()
    assert page.status_code == 200
    assert "timeout after #s talking to #.#.#.#" in body
    assert "http # from upstream req-&lt;hex&gt;" in body
    assert "user &lt;uuid&gt; not found" in body
    assert "boom on" in body
    counts = {int(c.replace(",", "")) for c in __import__("re").findall(r'<td class="num"><strong>([\d,]+)</strong>', body)}
    assert counts == {100, 1}

    preview = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:group", "group": "user <uuid> not found"}, **htmx())
    assert "100 dead letters in this group can be canceled." in preview.content.decode()
    response = alice_client.post(reverse("bulk_start"), {"action": "cancel", "scope": "group", "group": "user <uuid> not found"})
    job = bulk.get(response["Location"].rstrip("/").split("/")[-1], world.alice_user.id)
    assert job.wait(30) and job.changed == 100 and job.skipped == 0
    assert states() == {"failed": 201, "canceled": 100}
    assert todo.id  # the single reason-group is untouched


def test_a_selection_keeps_only_the_viewer_s_ids_and_counts_what_the_action_can_change(world):
    from todos.selectors import todos as selectors
    from todos.selectors.access import viewer_for

    dead, pending = make(world, "dead"), make(world, "pending")
    done = make(world, "done")
    foreign = make(world, "dead", agent=world.globex_agent)
    alice, vera = viewer_for(world.alice_user), viewer_for(world.vera_user)
    raw = [pending.id, foreign.id, "td_unknown", dead.id, pending.id, "x" * 65, 7, done.id]
    assert selectors.visible_ids(alice, raw) == [pending.id, dead.id, done.id]  # order kept, once each
    ids = selectors.visible_ids(alice, raw)
    assert selectors.count_eligible(alice, ids, "retry") == 1  # the dead letter only
    assert selectors.count_eligible(alice, ids, "cancel") == 2  # pending and dead, not done
    assert selectors.count_eligible(alice, [foreign.id], "retry") == 0  # another team's, even if named
    assert selectors.count_eligible(vera, ids, "cancel") == 0  # a viewer acts on nothing

"""Bulk retry and cancel: preview count, a job row worked in chunks of ≤ 500 ids by the background
loop body, audited, a report of changed vs skipped; dead letters grouped by failure reason.

The pages write the job; ``work()`` runs the loop body (what ``todos.ops.loops`` runs in every
process) until the job is finished. Workers in several threads and processes:
tests/board/test_bulk_jobs.py."""

from __future__ import annotations

import json
import time

import pytest
from django.urls import reverse

from tests.factories import recount
from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.selectors import bulk_jobs
from todos.core.selectors.access import viewer_for
from todos.core.store import human as human_store
from todos.ops import bulk

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
INSERT INTO todos (id, endpoint_id, queue, title, state, attempt, max_attempts, result,
                   created_at, updated_at, completed_at)
SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), %(ep)s, %(queue)s, 'dead letter #' || i, 'failed', 5, 5,
       jsonb_build_object('error', CASE i %% 3
           WHEN 0 THEN 'timeout after ' || (i %% 60) || 's talking to 10.0.' || (i %% 250) || '.7'
           WHEN 1 THEN 'HTTP 503 from upstream req-a1' || substr(md5(i::text), 1, 12)
           ELSE 'user ' || gen_random_uuid() || ' not found' END),
       now() - i * interval '1 millisecond', now(), now()
FROM generate_series(1, %(n)s) AS i""",
            {"ep": endpoint_id, "n": n, "queue": queue},
        )
        # their reason group, as the statement that fails a todo stores it
        conn.execute(
            """UPDATE todos SET failure_reason_group = board_reason_group(NULL, NULL, result->>'error')
               WHERE state = 'failed' AND failure_reason_group IS NULL"""
        )
    recount()


def audit_count(action: str) -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM audit_log WHERE action = %s", (action,)).fetchone()["n"]


def job_count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM bulk_jobs").fetchone()["n"]


def work(user, job_id, timeout: float = 120.0):
    """Run the bulk loop body until nothing is left to do; the job as its starter sees it."""
    bulk.work_until_idle(timeout)
    job = bulk_jobs.get(viewer_for(user), job_id)
    assert job is not None and job.finished, job
    return job


def job_id_of(response) -> str:
    if response.status_code == 302:
        return response["Location"].rstrip("/").split("/")[-1]
    return response.content.decode().split('id="bulk-job-')[1].split('"')[0]


def audits_per_todo(action: str) -> dict[str, int]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT todo_id, count(*) AS n FROM audit_log WHERE action = %s GROUP BY todo_id", (action,)
        ).fetchall()
    return {r["todo_id"]: r["n"] for r in rows}


def states() -> dict[str, int]:
    with connect() as conn:
        rows = conn.execute("SELECT state, count(*) AS n FROM todos GROUP BY state").fetchall()
    return {r["state"]: r["n"] for r in rows}


@pytest.mark.slow
def test_bulk_retry_of_ten_thousand_dead_letters_in_chunks(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 10_000)
    make(world, "pending")  # not a dead letter: never touched

    preview = alice_client.post(
        reverse("bulk_preview"), {"plan": "retry:matching", "state": "dead"}, **htmx("bulk-panel")
    )
    assert preview.status_code == 200
    body = preview.content.decode()
    assert "10,000 todos can be retried." in body and "Retry 10,000" in body
    assert 'name="scope" value="matching"' in body and 'name="state" value="dead"' in body
    assert states()["failed"] == 10_000  # a preview changes nothing

    # Half-way through, someone cancels 100 of the rows the job has not reached yet (the oldest).
    with connect() as conn:
        late = [
            r["id"]
            for r in conn.execute(
                "SELECT id FROM todos WHERE state = 'failed' ORDER BY created_at ASC, id ASC LIMIT 100"
            ).fetchall()
        ]
    sizes: list[int] = []
    original = bulk.run_chunk

    def chunk_and_interfere(chunk, conn):
        sizes.append(len(chunk.todo_ids))
        if len(sizes) == 2:
            execute(human_store.cancel_many(world.adam, late))
        return original(chunk, conn)

    monkeypatch.setattr(bulk, "run_chunk", chunk_and_interfere)
    started = time.monotonic()
    response = alice_client.post(
        reverse("bulk_start"),
        {"action": "retry", "scope": "matching", "state": "dead", "note": "mass retry"},
        **htmx("bulk-panel"),
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert 'hx-trigger="every 1s"' in text and "Collecting matching todos" in text  # queued: polls
    job_id = job_id_of(response)
    assert states()["failed"] == 10_000  # starting writes the job row only; the loops do the work
    job = work(world.alice_user, job_id)
    elapsed = time.monotonic() - started
    assert elapsed < 60, f"bulk retry of 10,000 took {elapsed:.1f}s"
    assert job.state == "done", job.error
    assert job.total == 10_000 and job.processed == 10_000
    assert max(sizes) <= 500 and len(sizes) == 20
    assert job.changed == 9_900 and job.skipped == 100
    assert {s.id for s in job.skipped_sample} <= set(late) and len(job.skipped_sample) == 20
    assert {s.state for s in job.skipped_sample} == {"canceled"}  # why each was skipped
    assert audit_count("todo.retry") == job.changed
    assert set(audits_per_todo("todo.retry").values()) == {1}  # each todo retried once
    assert states() == {"pending": 9_901, "canceled": 100}

    # the job's fragment reports it (and tells the page to refresh the list)
    report = alice_client.get(reverse("bulk_job", args=[job_id]), **htmx())
    text = report.content.decode()
    assert "9,900</strong> changed" in text and "100</strong> skipped" in text
    assert "hx-trigger" not in text  # stops polling
    trigger = json.loads(report["HX-Trigger"])
    assert (
        "board:bulk-finished" in trigger
        and "9,900 changed, 100 skipped" in trigger["board:toast"]["items"][0]["message"]
    )
    # and without JavaScript the same report is a page
    page = alice_client.get(reverse("bulk_job", args=[job_id]))
    assert (
        b"<html" in page.content
        and b"9,900</strong> changed" in page.content
        and b'http-equiv="refresh"' not in page.content
    )


def test_bulk_cancel_of_a_selection_reports_rows_whose_state_moved(world, alice_client):
    pending = [make(world, "pending", title=f"p{i}") for i in range(3)]
    done = make(world, "done")
    ids = [t.id for t in pending] + [done.id]
    preview = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:selected", "ids": ids}, **htmx())
    body = preview.content.decode()
    assert "4 selected todos" in body and "3 of them can be canceled now; the rest will be skipped." in body
    # between the preview and the confirmation, one pending todo is claimed and completed elsewhere
    execute(human_store.claim(world.adam, pending[0].id))
    execute(human_store.complete(world.adam, pending[0].id))
    response = alice_client.post(reverse("bulk_start"), {"action": "cancel", "scope": "selected", "ids": ids})
    assert response.status_code == 302
    job = work(world.alice_user, job_id_of(response))
    assert (job.changed, job.skipped) == (2, 2)
    assert {(s.id, s.state) for s in job.skipped_sample} == {(pending[0].id, "done"), (done.id, "done")}
    assert audit_count("todo.cancel") == 2


def test_bulk_errors_name_the_field(world, alice_client, vera_client):
    response = alice_client.post(reverse("bulk_start"), {"plan": "cancel:selected"}, **htmx())
    assert response.status_code == 400 and "ids: select at least one todo first" in response.content.decode()
    response = alice_client.post(reverse("bulk_preview"), {"plan": "explode:selected", "ids": ["x"]}, **htmx())
    assert (
        response.status_code == 400
        and "action: must be retry, cancel, run_now or run_anyway" in response.content.decode()
    )
    response = alice_client.post(reverse("bulk_preview"), {"action": "retry", "scope": "everything"})
    assert response.status_code == 400 and b"scope: must be selected, matching or group" in response.content
    response = alice_client.post(reverse("bulk_preview"), {"plan": "retry:group"})
    assert response.status_code == 400 and b"group: choose a failure-reason group" in response.content
    todo = make(world, "dead")
    assert vera_client.post(reverse("bulk_preview"), {"plan": "retry:selected", "ids": [todo.id]}).status_code == 403
    assert vera_client.post(reverse("bulk_start"), {"plan": "retry:selected", "ids": [todo.id]}).status_code == 403
    # the same errors on the confirmation, which is the only request that writes: nothing written
    response = alice_client.post(reverse("bulk_start"), {"plan": "explode:selected", "ids": [todo.id]}, **htmx())
    assert (
        response.status_code == 400
        and "action: must be retry, cancel, run_now or run_anyway" in response.content.decode()
    )
    response = alice_client.post(
        reverse("bulk_start"), {"action": "retry", "scope": "selected", "ids": [todo.id], "note": "a\x00b"}
    )
    # the Board's guard refuses control characters in any field before the view runs
    assert response.status_code == 400 and b"note: must not contain NUL or other control characters" in response.content
    assert job_count() == 0 and audit_count("todo.retry") == 0


@pytest.mark.parametrize(
    "query, message",
    [
        ({"state": "bogus"}, "state: unknown state &#x27;bogus&#x27;"),
        ({"state": "dead", "sort": "sideways"}, "sort: unknown order &#x27;sideways&#x27;"),
        ({"state": "dead", "q": "\x00"}, "q: must not contain NUL or other control characters"),
    ],
)
def test_a_filter_that_does_not_parse_is_refused_not_widened(world, alice_client, query, message):
    """A list page shows "all" for an unknown state; a bulk action must not act on "all"."""
    make(world, "dead")
    make(world, "pending")
    for url in ("bulk_preview", "bulk_start"):
        response = alice_client.post(reverse(url), {"action": "cancel", "scope": "matching", **query}, **htmx())
        assert response.status_code == 400, url
        assert message in response.content.decode()
    assert job_count() == 0
    bulk.work_until_idle(10)
    assert states() == {"pending": 1, "failed": 1}


def test_someone_elses_job_is_not_found_byte_for_byte(world, alice_client, bob_client):
    from tests.support.board import login

    todo = make(world, "dead")
    response = alice_client.post(reverse("bulk_start"), {"action": "retry", "scope": "selected", "ids": [todo.id]})
    job_id = job_id_of(response)
    work(world.alice_user, job_id)
    adam = login(world.adam_user)  # same team, but not the one who started it
    unknown = adam.get(reverse("bulk_job", args=["00000000-0000-4000-8000-000000000000"]))
    malformed = adam.get(reverse("bulk_job", args=["not-a-job"]))
    assert unknown.status_code == malformed.status_code == 404
    for client in (adam, bob_client):  # bob: another team
        for headers in ({}, htmx()):
            response = client.get(reverse("bulk_job", args=[job_id]), **headers)
            assert response.status_code == 404 and response.content == unknown.content
        stop = client.post(reverse("bulk_stop", args=[job_id]))
        assert stop.status_code == 404 and stop.content == unknown.content
    assert alice_client.get(reverse("bulk_job", args=[job_id])).status_code == 200


def test_stopping_a_job_leaves_the_rest_alone(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 1_200)  # three chunks
    response = alice_client.post(
        reverse("bulk_start"), {"action": "retry", "scope": "matching", "state": "dead"}, **htmx()
    )
    job_id = job_id_of(response)
    assert bulk.collect_one() and bulk.work_one_chunk()  # ids fixed, one chunk of 500 done
    stopped = alice_client.post(reverse("bulk_stop", args=[job_id]), **htmx())
    assert stopped.status_code == 200 and "hx-trigger" not in stopped.content.decode()
    assert (
        "500</strong> changed" in stopped.content.decode()
        and "the other 700 planned were left alone" in stopped.content.decode()
    )
    assert not bulk.work_one_chunk()  # no chunk of a stopped job is taken
    job = work(world.alice_user, job_id)
    assert (job.state, job.processed, job.changed) == ("canceled", 500, 500)
    assert audit_count("todo.retry") == 500 and states() == {"pending": 500, "failed": 700}
    again = alice_client.post(reverse("bulk_stop", args=[job_id]))  # stopping a finished job: no change
    assert again.status_code == 302 and work(world.alice_user, job_id).state == "canceled"


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
    counts = {
        int(c.replace(",", "")) for c in __import__("re").findall(r'<td class="num"><strong>([\d,]+)</strong>', body)
    }
    assert counts == {100, 1}

    preview = alice_client.post(
        reverse("bulk_preview"), {"plan": "cancel:group", "group": "user <uuid> not found"}, **htmx()
    )
    assert "100 dead letters in this group can be canceled." in preview.content.decode()
    response = alice_client.post(
        reverse("bulk_start"), {"action": "cancel", "scope": "group", "group": "user <uuid> not found"}
    )
    job = work(world.alice_user, job_id_of(response))
    assert job.state == "done" and job.changed == 100 and job.skipped == 0
    assert states() == {"failed": 201, "canceled": 100}
    assert todo.id  # the single reason-group is untouched


def test_a_selection_keeps_only_the_viewer_s_ids_and_counts_what_the_action_can_change(world):
    from todos.core.selectors import bulk_targets as selectors
    from todos.core.selectors.access import viewer_for

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

"""Bulk jobs across workers and processes: started in one place, worked by the loops of others,
never an item twice, resumed after a worker dies or hangs, readable from every process.

Workers are the real loop body (``todos.ops.bulk.work_once``) on real connections: threads of this
process, ``manage.py reaper`` subprocesses (SIGKILLed mid-chunk), and daphne servers.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from django.urls import reverse

from tests.board.test_bulk import audit_count, audits_per_todo, insert_dead_letters, job_count, job_id_of, states
from tests.support.board import htmx, make
from tests.support.live_server import ROOT, server_environment
from todos.core.db import connect, execute
from todos.core.errors import Conflict, Forbidden, Invalid
from todos.core.selectors import bulk_jobs
from todos.core.selectors.access import viewer_for
from todos.core.store import bulk_jobs as store
from todos.core.store.scopes import OperatorScope
from todos.core.unavailable import Unavailable
from todos.ops import bulk

pytestmark = pytest.mark.usefixtures("store_db")


def start_retry_of_dead_letters(client) -> str:
    response = client.post(reverse("bulk_start"), {"action": "retry", "scope": "matching", "state": "dead"}, **htmx())
    assert response.status_code == 200, response.content
    return job_id_of(response)


def job_row(job_id) -> dict:
    with connect() as conn:
        return conn.execute("SELECT * FROM bulk_jobs WHERE id = %s", (job_id,)).fetchone()


def chunk_rows(job_id) -> list[dict]:
    with connect() as conn:
        return conn.execute(
            "SELECT seq, done_at, worker, cardinality(todo_ids) AS n, todo_ids FROM bulk_job_chunks"
            " WHERE job_id = %s ORDER BY seq",
            (job_id,),
        ).fetchall()


def work_until_finished(job_id, timeout: float = 60.0) -> dict:
    """The loop, in this thread: work, and when there is nothing to take (a chunk still locked by
    a worker that is dying), look again shortly — bounded in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = job_row(job_id)
        if row["state"] in ("done", "failed", "canceled"):
            return row
        try:
            if not bulk.work_once():
                time.sleep(0.05)
        except psycopg.OperationalError:
            time.sleep(0.05)
    raise AssertionError(f"job {job_id} not finished in {timeout} s: {job_row(job_id)}")


def assert_each_todo_retried_once(n: int) -> None:
    per_todo = audits_per_todo("todo.retry")
    assert len(per_todo) == n and set(per_todo.values()) == {1}, {k: v for k, v in per_todo.items() if v != 1}
    assert states() == {"pending": n}


def test_two_concurrent_workers_share_the_chunks_and_never_take_the_same_one(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 5_000)
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()  # ids fixed: 10 chunks
    taken: list[tuple[str, int]] = []
    original = bulk.run_chunk

    def slow_chunk(chunk, conn):
        taken.append((threading.current_thread().name, chunk.seq))
        outcome = original(chunk, conn)
        time.sleep(0.05)  # hold the chunk a while, so the other worker runs meanwhile
        return outcome

    monkeypatch.setattr(bulk, "run_chunk", slow_chunk)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker():
        try:
            barrier.wait(10)
            bulk.work_until_idle(60)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=worker, name=f"worker-{i}") for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not errors and not any(t.is_alive() for t in threads)
    assert sorted(seq for _, seq in taken) == list(range(10))  # every chunk taken exactly once
    assert {name for name, _ in taken} == {"worker-1", "worker-2"}  # and both workers took some
    chunks = chunk_rows(job_id)
    assert all(c["done_at"] is not None for c in chunks)
    assert {c["worker"].rsplit(":", 1)[1] for c in chunks} == {"worker-1", "worker-2"}
    job = bulk_jobs.get(viewer_for(world.alice_user), job_id)
    assert (job.state, job.total, job.processed, job.changed, job.skipped) == ("done", 5_000, 5_000, 5_000, 0)
    assert_each_todo_retried_once(5_000)


def test_a_worker_that_dies_mid_chunk_is_resumed_and_nothing_is_done_twice(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 1_500)
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    original = bulk.run_chunk
    doomed_did: list[int] = []

    def die_after_the_store_statement(chunk, conn):
        outcome = original(chunk, conn)
        if threading.current_thread().name == "doomed":
            doomed_did.append(len(outcome.changed))
            conn.close()  # the worker's connection goes away mid-transaction, as when its process dies
        return outcome

    monkeypatch.setattr(bulk, "run_chunk", die_after_the_store_statement)
    failures: list[BaseException] = []

    def doomed():
        try:
            bulk.work_one_chunk()
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    thread = threading.Thread(target=doomed, name="doomed")
    thread.start()
    thread.join(30)
    assert doomed_did == [500]  # it had retried its 500 todos (uncommitted) when it died
    assert failures and isinstance(failures[0], Unavailable)  # the store's word for a lost connection
    assert job_row(job_id)["processed"] == 0

    row = work_until_finished(job_id)
    assert (row["state"], row["processed"], row["changed"], row["skipped"]) == ("done", 1_500, 1_500, 0)
    assert all("doomed" not in c["worker"] for c in chunk_rows(job_id))
    assert_each_todo_retried_once(1_500)


def test_a_worker_that_hangs_holding_a_chunk_is_cut_off_and_its_chunk_resumed(world, alice_client, monkeypatch):
    monkeypatch.setattr(bulk, "HOLD_SECONDS", 2)
    insert_dead_letters(world.acme_ep.id, 1_000)
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    original = bulk.run_chunk
    hung = threading.Event()

    def hang_after_the_store_statement(chunk, conn):
        outcome = original(chunk, conn)
        if threading.current_thread().name == "hung":
            hung.set()
            time.sleep(6)  # idle in its transaction, locks held, past HOLD_SECONDS
        return outcome

    monkeypatch.setattr(bulk, "run_chunk", hang_after_the_store_statement)
    failures: list[BaseException] = []

    def hanging():
        try:
            bulk.work_one_chunk()
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    thread = threading.Thread(target=hanging, name="hung")
    thread.start()
    assert hung.wait(30)
    started = time.monotonic()
    row = work_until_finished(job_id, timeout=30)
    assert time.monotonic() - started < 6, (
        "the chunk waited for the hung worker to wake instead of the timeout cutting it off"
    )
    thread.join(30)
    assert failures and isinstance(failures[0], psycopg.errors.IdleInTransactionSessionTimeout)  # cut off by the server
    assert (row["state"], row["processed"], row["changed"]) == ("done", 1_000, 1_000)
    assert_each_todo_retried_once(1_000)


def test_a_loops_process_sigkilled_mid_chunk_is_resumed_by_another_worker(world, alice_client):
    """A real ``manage.py reaper`` process works the job; it is SIGKILLed while its second chunk's
    store statement runs (held on a row lock this test takes); this process's loop finishes."""
    insert_dead_letters(world.acme_ep.id, 1_500)
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    chunks = chunk_rows(job_id)
    blocker = connect(autocommit=False)
    blocker.execute("SELECT id FROM todos WHERE id = %s FOR UPDATE", (chunks[1]["todo_ids"][-1],))
    process = subprocess.Popen(
        [sys.executable, "manage.py", "reaper"],
        cwd=ROOT,
        env=server_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode()
            with connect() as conn:
                waiting = conn.execute(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE '%%UPDATE todos%%'"
                ).fetchone()["n"]
            if waiting and chunk_rows(job_id)[0]["done_at"] is not None:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the loops process never reached its second chunk")
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        blocker.rollback()
        blocker.close()
    first = chunk_rows(job_id)[0]
    assert f":{process.pid}:" in first["worker"]  # the killed process did the first chunk
    assert job_row(job_id)["processed"] == 500

    row = work_until_finished(job_id)
    assert (row["state"], row["processed"], row["changed"], row["skipped"]) == ("done", 1_500, 1_500, 0)
    assert all(f":{process.pid}:" not in c["worker"] for c in chunk_rows(job_id)[1:])
    assert_each_todo_retried_once(1_500)


def test_store_refuses_bad_jobs_and_writes_nothing(world):
    alice = OperatorScope(world.alice_user.id, "alice")
    cases = [
        (dict(action="explode", scope="matching"), "action: must be retry, cancel, run_now or run_anyway"),
        (dict(action="retry", scope="everything"), "scope: must be selected, matching or group"),
        (dict(action="retry", scope="selected", selected_ids=[]), "ids: select at least one todo first"),
        (dict(action="retry", scope="selected", selected_ids=["td_x"] * 1001), "ids: at most 1000 selected todos"),
        (dict(action="retry", scope="selected", selected_ids=[7]), "ids: must be a string"),
        (dict(action="retry", scope="group", group_reason=""), "group: choose a failure-reason group"),
        (
            dict(action="retry", scope="matching", filter_params={"state": ["dead"]}),
            "filter: must be the filter's parameters",
        ),
        (dict(action="retry", scope="matching", note="a\x00b"), "note: must not contain NUL characters"),
    ]
    for kwargs, message in cases:
        with pytest.raises(Invalid) as raised:
            execute(store.create(alice, description="d", **kwargs))
        assert message in raised.value.message
    with pytest.raises(Forbidden):  # a viewer acts on no team
        execute(
            store.create(OperatorScope(world.vera_user.id, "vera"), action="retry", scope="matching", description="d")
        )
    assert job_count() == 0


def test_a_job_fixes_its_ids_once_and_only_from_its_teams(world, alice_client):
    """The count fixed at start is the count worked: todos that match later are not added, and a
    job's teams bound what it collects even if its starter joins another team meanwhile."""
    from tests import factories

    mine = [make(world, "dead") for _ in range(3)]
    job_id = start_retry_of_dead_letters(alice_client)
    factories.member(world.globex, world.alice_user, "operator")  # alice joins globex after starting
    foreign = make(world, "dead", agent=world.globex_agent)
    assert bulk.collect_one()
    late = make(world, "dead")  # matches the filter, but after the ids were fixed
    bulk.work_until_idle(30)
    row = job_row(job_id)
    assert (row["state"], row["total"], row["changed"]) == ("done", 3, 3)
    assert set(audits_per_todo("todo.retry")) == {t.id for t in mine}
    assert foreign.id not in audits_per_todo("todo.retry") and late.id not in audits_per_todo("todo.retry")


def test_a_job_whose_starter_lost_their_role_skips_everything(world, alice_client):
    """The store re-checks operatorOwns at each chunk: a demoted starter's job changes nothing."""
    todos = [make(world, "dead") for _ in range(2)]
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    with connect() as conn:
        conn.execute("UPDATE team_members SET role = 'viewer' WHERE user_id = %s", (world.alice_user.id,))
    bulk.work_until_idle(30)
    job = bulk_jobs.get(viewer_for(world.alice_user), job_id)
    assert (job.state, job.changed, job.skipped) == ("done", 0, 2)
    assert {s.id for s in job.skipped_sample} == {t.id for t in todos}
    assert audit_count("todo.retry") == 0


def test_an_empty_job_is_done_at_once(world, alice_client):
    make(world, "pending")
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one() and not bulk.work_one_chunk()
    row = job_row(job_id)
    assert (row["state"], row["total"]) == ("done", 0) and row["finished_at"] is not None


def test_old_finished_jobs_are_purged_with_their_chunks(world, alice_client):
    make(world, "dead")
    old, recent = start_retry_of_dead_letters(alice_client), start_retry_of_dead_letters(alice_client)
    bulk.work_until_idle(30)
    with connect() as conn:
        conn.execute("UPDATE bulk_jobs SET finished_at = now() - interval '8 days' WHERE id = %s", (old,))
        assert execute(store.purge_finished(bulk.KEEP_FINISHED_DAYS), conn) == 1
        assert conn.execute("SELECT count(*) AS n FROM bulk_job_chunks WHERE job_id = %s", (old,)).fetchone()["n"] == 0
    assert job_row(old) is None and job_row(recent)["state"] == "done"


@pytest.mark.slow
def test_a_job_started_on_one_server_is_followed_on_another_and_outlives_the_first(world):
    """Two daphne processes and a loops process on one database: the job is started through A,
    A is SIGKILLed, and B shows its progress and report (the job's URL works on any process)."""
    import requests

    from tests.support.live import session_cookie
    from tests.support.live_server import start_server, stop_server

    insert_dead_letters(world.acme_ep.id, 3_000)
    cookie = session_cookie(world.alice_user)
    a, b = start_server(), start_server()
    loops = None
    try:
        session = requests.Session()
        session.cookies.set("sessionid", cookie)
        page = session.get(f"{a.url}/todos/?state=dead", timeout=30)
        assert page.status_code == 200, a.log()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        started = session.post(
            f"{a.url}/todos/bulk/",
            data={"action": "retry", "scope": "matching", "state": "dead", "csrfmiddlewaretoken": token},
            headers={"HX-Request": "true", "Referer": a.url + "/todos/"},
            timeout=30,
        )
        assert started.status_code == 200, started.text
        job_id = re.search(r'id="bulk-job-([0-9a-f-]+)"', started.text).group(1)
        a.process.send_signal(signal.SIGKILL)  # the process that started the job is gone
        a.process.wait(10)
        queued = session.get(f"{b.url}/todos/bulk/{job_id}/", headers={"HX-Request": "true"}, timeout=30)
        assert queued.status_code == 200 and 'hx-trigger="every 1s"' in queued.text

        loops = subprocess.Popen(
            [sys.executable, "manage.py", "reaper"],
            cwd=ROOT,
            env=server_environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            fragment = session.get(f"{b.url}/todos/bulk/{job_id}/", headers={"HX-Request": "true"}, timeout=30)
            assert fragment.status_code == 200
            if 'data-state="done"' in fragment.text:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"the job did not finish: {job_row(job_id)}")
        assert "3,000</strong> changed" in fragment.text and "hx-trigger" not in fragment.text
        assert "board:bulk-finished" in fragment.headers["HX-Trigger"]
        assert_each_todo_retried_once(3_000)
    finally:
        if loops is not None:
            loops.kill()
            loops.wait(10)
        stop_server(a)
        stop_server(b)


def test_a_job_whose_filter_no_longer_parses_fails_with_a_message_and_changes_nothing(world):
    """The page refuses such a filter; a row written otherwise (an older version, by hand) fails
    when its ids are collected, instead of being read as "all"."""
    make(world, "pending")
    job_id = execute(
        store.create(world.alice, action="cancel", scope="matching", description="d", filter_params={"state": "bogus"})
    )
    assert bulk.collect_one()
    row = job_row(job_id)
    assert row["state"] == "failed" and "state: unknown state 'bogus'" in row["error"]
    assert states() == {"pending": 1} and audit_count("todo.cancel") == 0


def test_a_job_no_loop_has_touched_says_it_is_waiting_for_one(world, alice_client):
    make(world, "dead")
    job_id = start_retry_of_dead_letters(alice_client)
    fresh = alice_client.get(reverse("bulk_job", args=[job_id]), **htmx()).content.decode()
    assert "No Board process has worked this job" not in fresh
    with connect() as conn:
        conn.execute("UPDATE bulk_jobs SET created_at = now() - interval '1 minute' WHERE id = %s", (job_id,))
    stalled = alice_client.get(reverse("bulk_job", args=[job_id]), **htmx()).content.decode()
    assert "No Board process has worked this job" in stalled and 'hx-trigger="every 1s"' in stalled


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.IdleInTransactionSessionTimeout("terminating connection due to idle-in-transaction timeout"),
        psycopg.errors.DeadlockDetected("deadlock detected"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        Conflict("another live todo already holds this idempotency key"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_chunk_that_meets_a_database_error_is_left_for_the_next_try(world, alice_client, monkeypatch, error):
    todo = make(world, "dead")
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    original = bulk.run_chunk
    monkeypatch.setattr(bulk, "run_chunk", lambda chunk, conn: (original(chunk, conn), (_ for _ in ()).throw(error)))
    with pytest.raises(type(error)):
        bulk.work_one_chunk()
    row = job_row(job_id)
    assert (row["state"], row["processed"], row["error"]) == ("running", 0, None)
    assert audit_count("todo.retry") == 0  # the store statement rolled back with the chunk
    monkeypatch.setattr(bulk, "run_chunk", original)
    assert work_until_finished(job_id)["changed"] == 1 and audits_per_todo("todo.retry") == {todo.id: 1}


def test_a_chunk_that_meets_a_bug_fails_the_job_with_a_message(world, alice_client, monkeypatch):
    make(world, "dead")
    job_id = start_retry_of_dead_letters(alice_client)
    assert bulk.collect_one()
    monkeypatch.setattr(bulk, "run_chunk", lambda chunk, conn: 1 / 0)
    assert bulk.work_one_chunk()
    row = job_row(job_id)
    assert row["state"] == "failed" and row["error"].startswith("The job stopped with an internal error")
    page = alice_client.get(reverse("bulk_job", args=[job_id]), **htmx())
    assert (
        "The job stopped with an internal error" in page.content.decode() and "hx-trigger" not in page.content.decode()
    )
    assert not bulk.work_one_chunk() and audit_count("todo.retry") == 0

"""``board_client.Worker`` with Python handlers, against a live Board: what a handler's answer
makes of the todo, one request per job, heartbeats, a lost lease, stopping, and a report whose
answer was lost."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from board_client import Client, Done, Fail, Job, Release, Worker

from tests import factories
from todos.core.db import execute
from todos.core.selectors.agent_api import get_todo
from todos.core.store import agent as agent_store
from todos.core.store import background
from todos.core.store import endpoints as endpoint_store


@pytest.fixture
def endpoint(store_db):
    team = factories.team()
    vended = factories.endpoint(team, slug="handlers", queues=("default", "other"))
    return vended, factories.agent(vended)


class Counting(httpx.HTTPTransport):
    """The real transport, counting requests by verb and keeping their bodies."""

    def __init__(self):
        super().__init__()
        self.sent: list[tuple[str, bytes]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((request.url.path.rsplit("/", 1)[1], request.read()))
        return super().handle_request(request)

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.sent]


def make_worker(url, token, transport=None, **options) -> Worker:
    options.setdefault("wait_seconds", 1)
    options.setdefault("claimant", "handler-test")
    client = Client(url, token, retries=0, transport=transport) if transport else None
    return Worker(url, token, client=client, **options)


def run(worker: Worker, *, todos: int, limit: float = 60) -> Worker:
    guard = threading.Timer(limit, worker.stop)
    guard.start()
    try:
        assert worker.run(max_todos=todos) == 0, worker.fatal
    finally:
        guard.cancel()
    return worker


def create(agent, title="t", queue="default", **fields):
    return execute(agent_store.create(agent, queue=queue, title=title, **fields)).todo


def detail(agent, todo_id):
    return execute(get_todo(agent, todo_id))


def test_what_a_handler_returns_is_how_its_todo_completes(asgi_server, endpoint):
    vended, agent = endpoint
    answers = {
        "text": "all good",
        "json": {"pages": 3},
        "done": Done(summary="built", result=[1, 2], artifact="https://example.com/out"),
        "none": None,
    }
    ids = {title: create(agent, title).id for title in answers}
    worker = make_worker(asgi_server.url, vended.token)
    worker.add_handler("default", lambda job: answers[job.title])
    run(worker, todos=4)
    got = {title: detail(agent, todo_id) for title, todo_id in ids.items()}
    assert all(d.todo.state == "done" for d in got.values())
    assert (got["text"].attempts[0].summary, got["text"].todo.result) == ("all good", None)
    assert got["json"].todo.result == {"pages": 3}
    assert (got["done"].attempts[0].summary, got["done"].todo.result) == ("built", [1, 2])
    assert got["done"].attempts[0].artifact == "https://example.com/out"
    assert got["none"].attempts[0].summary in (None, "")


def test_a_raising_handler_fails_its_todo_with_the_traceback_and_release_gives_it_back(asgi_server, endpoint):
    vended, agent = endpoint
    boom = create(agent, "boom", max_attempts=1)
    told = create(agent, "told", max_attempts=1)
    back = create(agent, "back")

    def handler(job: Job):
        if job.title == "boom":
            raise ValueError("the payload had no ref")
        if job.title == "told":
            raise Fail("upstream said 429", result={"retry": True})
        raise Release("not ready yet")

    worker = make_worker(asgi_server.url, vended.token, concurrency=1)
    worker.add_handler("default", handler)
    run(worker, todos=3)
    failed = detail(agent, boom.id)
    assert failed.todo.state == "failed" and failed.todo.result == {"error": "ValueError"}
    # the summary is the exception's one-line form; its traceback is in the attempt's error object
    assert failed.attempts[0].summary == "ValueError: the payload had no ref"
    error = failed.attempts[0].error
    assert error is not None and (error["type"], error["message"]) == ("ValueError", "the payload had no ref")
    assert error["traceback"].startswith("Traceback") and error["traceback"].endswith(failed.attempts[0].summary)
    told_detail = detail(agent, told.id)
    assert (told_detail.attempts[0].summary, told_detail.todo.result) == ("upstream said 429", {"retry": True})
    released = detail(agent, back.id)
    assert released.todo.state == "pending"
    assert (released.attempts[0].outcome, released.attempts[0].summary) == ("released", "not ready yet")
    assert sorted(o.verdict for o in worker.outcomes) == ["failed", "failed", "released"]


def test_a_busy_worker_makes_one_request_per_job(asgi_server, endpoint):
    """Each report carries ``next``: 30 todos take one claim_next and 30 completes (the last of
    which finds nothing, or max_todos stops it from asking)."""
    vended, agent = endpoint
    ids = [create(agent, f"job {n}").id for n in range(30)]
    transport = Counting()
    worker = make_worker(asgi_server.url, vended.token, transport=transport, concurrency=1)
    worker.add_handler("default", lambda job: job.title)
    run(worker, todos=30)
    assert sorted(o.todo_id for o in worker.outcomes) == sorted(ids)
    verbs = transport.verbs()
    assert verbs.count("complete") == 30 and verbs.count("claim_next") == 1, verbs
    assert verbs.count("heartbeat") == 0
    assert all(detail(agent, todo_id).todo.state == "done" for todo_id in ids)


def test_each_queue_has_its_handler_and_slots(asgi_server, endpoint):
    vended, agent = endpoint
    mine = [create(agent, f"d{n}").id for n in range(3)] + [create(agent, f"o{n}", queue="other").id for n in range(3)]
    seen: list[tuple[str, str]] = []
    worker = make_worker(asgi_server.url, vended.token)
    worker.add_handler("default", lambda job: seen.append(("default", job.todo["queue"])))
    worker.add_handler("other", lambda job: seen.append(("other", job.todo["queue"])), concurrency=2)
    run(worker, todos=6)
    assert sorted(seen) == [("default", "default")] * 3 + [("other", "other")] * 3
    assert sorted(o.todo_id for o in worker.outcomes) == sorted(mine)


def test_heartbeats_keep_a_short_lease_alive_under_a_python_handler(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "slow")
    worker = make_worker(asgi_server.url, vended.token, lease=1)
    worker.add_handler("default", lambda job: time.sleep(2.5) or "done")
    run(worker, todos=1)
    got = detail(agent, todo.id)
    assert got.todo.state == "done" and got.attempts[0].outcome == "completed"
    assert got.attempts[0].last_heartbeat_at is not None


def test_a_lost_lease_is_signalled_to_the_handler_and_its_outcome_dropped(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "contested")
    started, noticed = threading.Event(), threading.Event()

    def handler(job: Job):
        started.set()
        if job.lost.wait(30):
            noticed.set()
        return "finished anyway"

    worker = make_worker(asgi_server.url, vended.token, lease=3)
    worker.add_handler("default", handler)
    thread = threading.Thread(target=run, args=(worker,), kwargs={"todos": 1})
    thread.start()
    assert started.wait(20)
    from todos.core import db

    with db.connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo.id,))
    execute(agent_store.claim(agent, todo.id, claimant="usurper"))
    thread.join(30)
    assert noticed.is_set()
    assert [(o.todo_id, o.verdict) for o in worker.outcomes] == [(todo.id, "lost")]
    got = detail(agent, todo.id)
    assert got.todo.state == "claimed" and [a.claimant for a in got.attempts] == ["usurper", "handler-test"]
    execute(agent_store.release(agent, todo.id))


def hung_until_lost(started: threading.Event, noticed: threading.Event):
    """A handler that hangs (a model call that never returns) until it is told its lease is gone."""

    def handler(job: Job):
        started.set()
        if job.lost.wait(30):
            noticed.set()
        return "finished anyway"

    return handler


def test_a_hung_handler_past_its_todos_run_time_limit_is_stopped(asgi_server, endpoint):
    """The lease (30 s) would beat every 10 s; the todo's own limit (1 s) makes the worker beat as
    it passes, the server refuses the beat, and the handler is told to stop at once."""
    vended, agent = endpoint
    todo = create(agent, "hangs", timeout_seconds=1, max_attempts=2)
    started, noticed = threading.Event(), threading.Event()
    worker = make_worker(asgi_server.url, vended.token, lease=30)
    worker.add_handler("default", hung_until_lost(started, noticed))
    began = time.monotonic()
    run(worker, todos=1)
    assert noticed.is_set() and time.monotonic() - began < 8
    assert [(o.todo_id, o.verdict) for o in worker.outcomes] == [(todo.id, "lost")]
    assert execute(background.time_out()).ids == (todo.id,)
    got = detail(agent, todo.id)
    assert got.todo.state == "failed" and got.todo.next_retry_at is not None
    assert [(a.outcome, a.disposition) for a in got.attempts] == [("timed_out", "retry_scheduled")]


def test_a_hung_handler_past_its_queues_default_limit_is_stopped_as_it_passes(asgi_server, endpoint):
    """The claim answers the queue's default (1 s) as the attempt's limit: the worker beats as it
    passes, long before the 30 s lease's regular beat."""
    vended, agent = endpoint
    from todos.core.store import queue_settings

    execute(queue_settings.set_timeout(None, agent.team_id, "default", 1))
    todo = create(agent, "hangs")
    started, noticed = threading.Event(), threading.Event()
    worker = make_worker(asgi_server.url, vended.token, lease=30)
    worker.add_handler("default", hung_until_lost(started, noticed))
    began = time.monotonic()
    run(worker, todos=1)
    assert noticed.is_set() and time.monotonic() - began < 8
    assert [(o.todo_id, o.verdict) for o in worker.outcomes] == [(todo.id, "lost")]
    assert execute(background.time_out()).ids == (todo.id,)
    assert [a.outcome for a in detail(agent, todo.id).attempts] == ["timed_out"]


def test_stopping_lets_a_handler_finish_within_the_grace_and_releases_one_past_it(asgi_server, endpoint):
    vended, agent = endpoint
    quick = create(agent, "quick")
    stubborn = create(agent, "stubborn")
    running = threading.Barrier(3, timeout=20)

    def handler(job: Job):
        running.wait()
        if job.title == "quick":
            job.stopping.wait(20)
            return "wrapped up"
        time.sleep(10)  # ignores the stop
        return "too late"

    worker = make_worker(asgi_server.url, vended.token, concurrency=2, grace=1.0)
    worker.add_handler("default", handler)
    thread = threading.Thread(target=worker.run)
    thread.start()
    running.wait()
    began = time.monotonic()
    worker.stop()
    thread.join(20)
    assert not thread.is_alive() and time.monotonic() - began < 8
    assert detail(agent, quick.id).todo.state == "done"
    late = detail(agent, stubborn.id)
    assert late.todo.state == "pending" and late.attempts[0].outcome == "released"
    assert "still running" in late.attempts[0].summary
    assert sorted(o.verdict for o in worker.outcomes) == ["completed", "released"]


class LosesFirstCompleteAnswer(Counting):
    """Sends the first ``complete`` to the server, then drops its answer (the connection died)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path.endswith("/complete") and self.verbs().count("complete") == 1:
            response.read()
            raise httpx.ReadError("connection reset after the request was sent")
        return response


def test_a_report_whose_answer_was_lost_is_retried_without_next(asgi_server, endpoint):
    """The first complete landed and its ``next`` claimed the second todo; the worker cannot know
    that, so it repeats the report without ``next`` (answered conflict: it had landed) and claims
    again. The second todo comes back when its unknown lease lapses and is done then."""
    import json

    vended, agent = endpoint
    first = create(agent, "first")
    second = create(agent, "second")
    transport = LosesFirstCompleteAnswer()
    worker = make_worker(asgi_server.url, vended.token, transport=transport, lease=2)
    worker.add_handler("default", lambda job: job.title)
    reaping = threading.Event()

    def reaper():
        while not reaping.wait(0.5):
            execute(background.reap())

    threading.Thread(target=reaper, daemon=True).start()
    try:
        run(worker, todos=2, limit=40)
    finally:
        reaping.set()
    completes = [json.loads(body) for verb, body in transport.sent if verb == "complete"]
    assert completes[0]["id"] == completes[1]["id"] == first.id
    assert "next" in completes[0] and "next" not in completes[1]
    assert detail(agent, first.id).todo.state == "done"
    second_detail = detail(agent, second.id)
    assert second_detail.todo.state == "done"
    # The lease nobody here knew of lapsed (reaped, or taken over by the next claim): it died.
    assert [(a.outcome == "completed", a.died) for a in second_detail.attempts] == [(True, False), (False, True)]


def test_an_answer_the_server_refuses_fails_the_todo_saying_why(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "odd artifact", max_attempts=1)
    worker = make_worker(asgi_server.url, vended.token)
    worker.add_handler("default", lambda job: Done(summary="made it", artifact="s3://bucket/out"))
    run(worker, todos=1)
    got = detail(agent, todo.id)
    assert got.todo.state == "failed" and got.attempts[0].outcome == "failed"
    assert got.attempts[0].summary.startswith("the handler's answer was refused: invalid: artifact")


def test_a_worker_refuses_coroutines_and_a_second_handler_for_a_queue():
    worker = Worker("http://127.0.0.1:9", "t")

    async def handler(job):
        return None

    with pytest.raises(TypeError, match="coroutine"):
        worker.add_handler("q", handler)
    worker.add_handler("q", lambda job: None)
    with pytest.raises(ValueError, match="already has a handler"):
        worker.add_handler("q", lambda job: None)
    with pytest.raises(ValueError, match="no handlers"):
        Worker("http://127.0.0.1:9", "t").run()
    with pytest.raises(ValueError, match="concurrency"):
        Worker("http://127.0.0.1:9", "t", concurrency=0)


def test_a_scope_that_refuses_the_queue_stops_the_worker(asgi_server, endpoint):
    vended, _ = endpoint
    worker = make_worker(asgi_server.url, vended.token)
    worker.add_handler("elsewhere", lambda job: None)
    assert worker.run() == 1
    assert worker.fatal is not None and worker.fatal.code == "forbidden"


def test_a_worker_waits_out_paused_claims_and_takes_work_once_resumed(asgi_server, store_db, caplog):
    """Paused claims are neither fatal nor an outage: the worker logs it once, keeps claiming
    every so often, and its claims take work again as soon as a team admin resumes them."""
    team = factories.team()
    vended = factories.endpoint(team, slug="paused-worker", queues=("default",))
    agent = factories.agent(vended)
    admin = factories.member(team, factories.user("adam"), "admin")
    execute(endpoint_store.pause_claims(admin, agent.endpoint_id))
    todo = create(agent, "after the pause")
    worker = make_worker(asgi_server.url, vended.token, wait_seconds=0.5)
    worker.paused_retry_seconds = 0.2
    worker.add_handler("default", lambda job: "done")
    runner = threading.Thread(target=run, args=(worker,), kwargs={"todos": 1})
    with caplog.at_level("INFO", logger="board_client.worker"):
        runner.start()
        time.sleep(1.5)  # several tries meet the pause
        assert runner.is_alive() and worker.fatal is None
        assert detail(agent, todo.id).todo.state == "pending"
        execute(endpoint_store.resume_claims(admin, agent.endpoint_id))
        runner.join(20)
    assert not runner.is_alive()
    assert detail(agent, todo.id).todo.state == "done"
    paused_lines = [r for r in caplog.records if "claims paused" in r.getMessage()]
    assert len(paused_lines) == 1 and "by adam" in paused_lines[0].getMessage()
    assert any("claims resumed" in r.getMessage() for r in caplog.records)

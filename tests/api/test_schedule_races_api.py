"""The schedule verbs under races over real HTTP (two clients, started together): two
``create_schedule`` with one name, and ``fire_schedule`` against ``delete_schedule``. Each answers
success or a clean error, never 500, and a fire that created its todo answers 200 with it."""

from __future__ import annotations

import threading

import httpx

from tests.support.api import check_response
from todos.core import db

ROUNDS = 15
BODY = {"cron": "0 3 * * *", "timezone": "UTC", "queue": "default", "title": "Race"}


def together(base_url: str, token: str, calls: list[tuple[str, dict]]) -> list[httpx.Response]:
    """Send ``calls`` at once, one thread and one connection each; their answers, schema-checked."""
    barrier = threading.Barrier(len(calls))
    answers: list = [None] * len(calls)

    def send(i: int) -> None:
        verb, body = calls[i]
        with httpx.Client(base_url=base_url, timeout=30) as client:
            client.get("/healthz")  # connected before the barrier, so the two posts start together
            barrier.wait()
            answers[i] = client.post(f"/api/v1/{verb}", json=body, headers={"Authorization": f"Bearer {token}"})

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for (verb, _), answer in zip(calls, answers):
        assert answer is not None, f"{verb} never answered"
        check_response(verb, answer)
    return answers


def count(query: str) -> int:
    with db.connect() as conn:
        return conn.execute(query).fetchone()["n"]


def test_two_create_schedule_with_one_name_at_once(api, tenancy, asgi_server):
    for n in range(ROUNDS):
        body = {**BODY, "name": f"race-{n}"}
        answers = together(asgi_server.url, tenancy.worker_token, [("create_schedule", body)] * 2)
        assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
        refused = next(a for a in answers if a.status_code == 400).json()["error"]
        assert refused["code"] == "invalid"
        assert refused["message"] == "name: the team already has a schedule with this name"
    assert count("SELECT count(*) AS n FROM schedules") == ROUNDS


def test_fire_schedule_racing_delete_schedule(api, tenancy, asgi_server):
    token, fired = tenancy.worker_token, 0
    for n in range(ROUNDS):
        made = api.ok(token, "create_schedule", {**BODY, "name": f"fire-{n}"})["schedule"]
        fire, delete = together(
            asgi_server.url, token, [("fire_schedule", {"id": made["id"]}), ("delete_schedule", {"id": made["id"]})]
        )
        assert delete.status_code == 200, delete.text
        assert fire.status_code in (200, 404), fire.text
        if fire.status_code == 200:
            assert fire.json()["schedule"]["id"] == made["id"] and fire.json()["todo_id"].startswith("td_")
            fired += 1
        else:
            assert fire.json()["error"]["message"] == "no such schedule"
    # a fire answered 404 created nothing; every 200 created its todo
    assert count("SELECT count(*) AS n FROM todos WHERE source = 'schedule'") == fired


def test_a_fire_whose_schedule_is_deleted_before_the_answer_answers_from_its_own_statement(tenancy, monkeypatch):
    """The delete lands between the fire's commit and the handler's re-read of the schedule: the
    todo exists, so the answer is 200 with it, the schedule as the fire's statement returned it."""
    from datetime import UTC, datetime

    from tests.support.api import VALIDATORS, run_async
    from todos.agents.api import handlers
    from todos.core.db import execute
    from todos.core.selectors import schedules as schedule_reads
    from todos.core.selectors.agent_api import credential_for
    from todos.core.store import schedules
    from todos.core.store.endpoints import token_hash

    made = execute(schedules.create(tenancy.agent, tenancy.team.id, now=datetime.now(UTC), name="gone", **BODY))
    call = handlers.Call(credential=execute(credential_for(token_hash(tenancy.worker_token))))
    reread = schedule_reads.endpoint_schedule

    def delete_first(endpoint_id, schedule_id):
        execute(schedules.delete(tenancy.agent, schedule_id))
        return reread(endpoint_id, schedule_id)

    monkeypatch.setattr(schedule_reads, "endpoint_schedule", delete_first)
    answer = run_async(lambda: handlers.fire_schedule(call, {"id": str(made.id)}))
    assert not list(VALIDATORS["fire_schedule"].iter_errors(answer)), answer
    assert answer["schedule"]["id"] == str(made.id) and answer["schedule"]["name"] == "gone"
    assert [f["todo_id"] for f in answer["schedule"]["fires"]] == [answer["todo_id"]]
    assert answer["schedule"]["fires"][0]["how"] == "manual"
    assert count("SELECT count(*) AS n FROM schedules") == 0
    assert count("SELECT count(*) AS n FROM todos WHERE source = 'schedule'") == 1

"""create_batch: up to 1,000 todos in one statement, each answered as create would; a bad item
writes nothing; keys hold within the batch and against concurrent batches."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from tests.store.helpers import row, sql
from todos.core.db import execute
from todos.core.errors import Forbidden, Invalid
from todos.core.store import agent as agent_store


def todo_count() -> int:
    return sql("SELECT count(*) AS n FROM todos")[0]["n"]


def test_each_item_becomes_a_pending_todo_in_order_with_its_own_fields(agent):
    run_at = datetime.now(UTC) + timedelta(hours=1)
    results = execute(
        agent_store.create_batch(
            agent,
            [
                {"queue": "default", "title": "first", "payload": {"n": 1}, "priority": 3},
                {"queue": "default", "title": "later", "run_at": run_at.isoformat()},
                {"queue": "default", "title": "gpu", "requires": ["gpu"], "kind": "render", "max_attempts": 2},
            ],
        )
    )
    assert [r.ok for r in results] == [True, True, True]
    assert [r.created for r in results] == [True, True, True]
    assert [r.todo.title for r in results] == ["first", "later", "gpu"]
    rows = [row(r.id) for r in results]
    assert [(x["state"], x["payload"], x["priority"]) for x in rows] == [
        ("pending", {"n": 1}, 3),
        ("pending", None, 0),
        ("pending", None, 0),
    ]
    assert rows[1]["next_retry_at"] == run_at.replace(microsecond=rows[1]["next_retry_at"].microsecond)
    assert (rows[2]["requires"], rows[2]["kind"], rows[2]["max_attempts"]) == (["gpu"], "render", 2)
    assert len({r.id for r in results}) == 3


def test_a_key_held_before_or_earlier_in_the_batch_answers_that_todo(agent):
    held = execute(agent_store.create(agent, queue="default", title="held", idempotency_key="k-held")).todo
    results = execute(
        agent_store.create_batch(
            agent,
            [
                {"queue": "default", "title": "again", "idempotency_key": "k-held"},
                {"queue": "default", "title": "new", "idempotency_key": "k-new"},
                {"queue": "default", "title": "new twice", "idempotency_key": "k-new"},
                {"queue": "default", "title": "no key"},
            ],
        )
    )
    assert [(r.created, r.todo.title) for r in results] == [
        (False, "held"),
        (True, "new"),
        (False, "new"),
        (True, "no key"),
    ]
    assert results[0].id == held.id and results[1].id == results[2].id
    assert sql("SELECT count(*) AS n FROM todos WHERE idempotency_key = 'k-new'")[0]["n"] == 1


@pytest.mark.parametrize(
    ("items", "field"),
    [
        ([{"queue": "default", "title": "ok"}, {"queue": "default", "title": ""}], "items[1].title"),
        ([{"queue": "default", "title": "ok"}, {"queue": "default"}], "items[1].title"),
        ([{"queue": "default", "title": "ok", "bogus": 1}], "items[0].bogus"),
        ([{"queue": "default", "title": "ok"}, "nope"], "items[1]"),
        ([{"queue": "default", "title": "ok", "priority": "high"}], "items[0].priority"),
        ([{"queue": "default", "title": "t", "run_at": "2020-01-01", "delay_seconds": 5}], "items[0].run_at"),
        ([], "items"),
        ([{"queue": "default", "title": "t"}] * 1001, "items"),
        ("not a list", "items"),
    ],
)
def test_a_bad_item_is_named_and_nothing_of_the_batch_is_written(agent, items, field):
    before = todo_count()
    with pytest.raises(Invalid) as refused:
        execute(agent_store.create_batch(agent, items))
    assert refused.value.field == field, refused.value
    assert todo_count() == before


def test_an_item_outside_the_scope_is_forbidden_naming_it_and_nothing_is_written(agent):
    before = todo_count()
    with pytest.raises(Forbidden) as refused:
        execute(
            agent_store.create_batch(agent, [{"queue": "default", "title": "ok"}, {"queue": "elsewhere", "title": "x"}])
        )
    assert "items[1].queue" in refused.value.message
    assert todo_count() == before


def test_a_thousand_items_in_one_statement(agent):
    before = todo_count()
    results = execute(agent_store.create_batch(agent, [{"queue": "default", "title": f"t{i}"} for i in range(1000)]))
    assert len(results) == 1000 and all(r.created for r in results)
    assert [r.todo.title for r in results[:3]] == ["t0", "t1", "t2"]
    assert todo_count() == before + 1000


def test_concurrent_batches_with_the_same_keys_make_one_todo_per_key(agent):
    """Four threads, each on its own connection, send batches of the same 50 keys at once: every
    key ends with one todo; every answer is that todo (created by exactly one batch) or a
    conflict to retry."""
    keys = [f"race-{i}" for i in range(50)]
    answers: list[list] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def send():
        try:
            start.wait()
            answers.append(
                execute(
                    agent_store.create_batch(
                        agent, [{"queue": "default", "title": k, "idempotency_key": k} for k in keys]
                    )
                )
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    by_key = {
        r["idempotency_key"]: r["id"]
        for r in sql("SELECT id, idempotency_key FROM todos WHERE idempotency_key LIKE 'race-%'")
    }
    assert sorted(by_key) == sorted(keys)
    assert sql("SELECT count(*) AS n FROM todos WHERE idempotency_key LIKE 'race-%'")[0]["n"] == 50
    for n, key in enumerate(keys):
        answered = [batch[n] for batch in answers]
        assert sum(1 for a in answered if a.ok and a.created) == 1, (key, answered)
        assert all(a.id == by_key[key] for a in answered if a.ok)
        assert all(a.error.code == "conflict" for a in answered if not a.ok)

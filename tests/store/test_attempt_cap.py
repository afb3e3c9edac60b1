"""Retention of attempts: past the per-todo cap a claim deletes the oldest closed attempts in the
same statement and counts them in ``attempts_pruned``; ``seq`` never goes back."""

from __future__ import annotations

from tests.store.helpers import attempts, lapse, make_due, row, sql
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store


def test_the_cap_keeps_the_newest_attempts_and_counts_the_pruned(agent, settings):
    settings.BOARD_ATTEMPTS_CAP = 5
    todo_id = execute(agent_store.create(agent, queue="default", title="busy", max_attempts=100)).todo.id
    for n in range(1, 9):
        claim = execute(agent_store.claim(agent, todo_id))
        assert claim.attempt_seq == n
        r = row(todo_id)
        kept = attempts(todo_id)
        assert [a["seq"] for a in kept] == list(range(max(1, n - 4), n + 1))
        assert r["attempts_total"] == n and r["attempts_pruned"] == max(0, n - 5)
        assert r["attempts_pruned"] + len(kept) == r["attempts_total"]
        execute(agent_store.release(agent, todo_id))


def test_a_takeover_past_the_cap_closes_the_dead_attempt_and_keeps_it(agent, settings):
    settings.BOARD_ATTEMPTS_CAP = 5
    todo_id = execute(agent_store.create(agent, queue="default", title="busy", max_attempts=100)).todo.id
    for _ in range(5):
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.release(agent, todo_id))
    execute(agent_store.claim(agent, todo_id))  # seq 6, prunes seq 1
    lapse(todo_id)
    claim = execute(agent_store.claim(agent, todo_id))  # seq 7 takes over seq 6, prunes seq 2
    assert claim.took_over
    kept = attempts(todo_id)
    assert [a["seq"] for a in kept] == [3, 4, 5, 6, 7]
    assert (kept[-2]["outcome"], kept[-2]["disposition"]) == ("lease_expired", "requeued")
    assert row(todo_id)["attempts_pruned"] == 2
    assert [p.seq for p in claim.prior_attempts] == [6, 5, 4, 3]


def test_retry_resets_the_budget_but_not_the_numbering(world, settings):
    settings.BOARD_ATTEMPTS_CAP = 5
    agent = world.agent
    todo_id = execute(agent_store.create(agent, queue="default", title="x", max_attempts=3)).todo.id
    for _ in range(3):
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.fail(agent, todo_id))
        if row(todo_id)["next_retry_at"] is not None:
            make_due(todo_id)
    r = row(todo_id)
    assert (r["state"], r["next_retry_at"], r["attempt"], r["attempts_total"]) == ("failed", None, 3, 3)
    execute(human_store.retry(world.human, todo_id))
    assert (row(todo_id)["attempt"], row(todo_id)["attempts_total"]) == (0, 3)
    for n in range(4, 8):
        claim = execute(agent_store.claim(agent, todo_id))
        assert (claim.attempt_seq, claim.todo.attempt) == (n, n - 3)
        execute(agent_store.release(agent, todo_id))
    r = row(todo_id)
    assert (r["attempts_total"], r["attempts_pruned"]) == (7, 2)
    assert [a["seq"] for a in attempts(todo_id)] == [3, 4, 5, 6, 7]
    assert [a["attempt"] for a in attempts(todo_id)] == [3, 1, 2, 3, 4]


def test_a_batch_claim_prunes_per_todo(agent, settings):
    settings.BOARD_ATTEMPTS_CAP = 5
    ids = [
        execute(agent_store.create(agent, queue="default", title=f"t{i}", max_attempts=100)).todo.id for i in range(3)
    ]
    for _ in range(7):
        claims = execute(agent_store.claim_batch(agent, max=3))
        assert sorted(c.todo.id for c in claims) == sorted(ids)
        for c in claims:
            execute(agent_store.release(agent, c.todo.id))
    for todo_id in ids:
        assert [a["seq"] for a in attempts(todo_id)] == [3, 4, 5, 6, 7]
        assert row(todo_id)["attempts_pruned"] == 2


def test_a_claim_answers_the_five_newest_ended_attempts_with_the_store_s_attempt_columns(agent):
    """``todo_prior_attempts`` (0039) writes its own column list: it is the store's, and the newest
    ``PRIOR_ATTEMPTS_LIMIT`` attempts come back, newest first."""
    from todos.core.store.claims import PRIOR_ATTEMPTS_LIMIT
    from todos.core.store.records import ATTEMPT_COLUMNS

    todo_id = execute(agent_store.create(agent, queue="default", title="busy", max_attempts=100)).todo.id
    for _ in range(7):
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.release(agent, todo_id))
    claim = execute(agent_store.claim(agent, todo_id))
    assert [p.seq for p in claim.prior_attempts] == [7, 6, 5, 4, 3][:PRIOR_ATTEMPTS_LIMIT]
    [answer] = sql("SELECT todo_prior_attempts(%s, 0, 1, NULL) AS a", (todo_id,))
    assert list(answer["a"][0]) == [name.strip() for name in ATTEMPT_COLUMNS.split(",")]
    assert answer["a"][0]["seq"] == 7

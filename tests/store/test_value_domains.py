"""A column's own rule is its type, a domain (migration 0018), so PostgreSQL checks it where a
value is stored and not on every row every statement writes; the rules that relate two columns
stay table CHECKs. Each domain still refuses what its CHECK refused, and refusing writes nothing."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.errors import CheckViolation

from tests.store.helpers import attempts, one, sql
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.live.relay import PASS_LOCK

# the table CHECKs the hot tables keep: each relates two or more columns of a row, except the
# todo's state, which every transition writes (a domain would check it on each write all the same)
# and which the partial indexes' predicates name
KEPT_ON_ONE_COLUMN = {"todos_state_check"}
RELATING = {
    "todos": {"todos_check", "todos_not_before_state", "todos_state_check"},
    "todo_attempts": {"todo_attempts_check", "todo_attempts_check1"},
    "change_log": set(),
}


def test_the_tables_a_claim_and_a_complete_write_keep_only_checks_that_relate_columns():
    rows = sql(
        """SELECT conrelid::regclass::text AS tab, conname, cardinality(conkey) AS columns FROM pg_constraint
           WHERE contype = 'c' AND conrelid IN ('todos'::regclass, 'todo_attempts'::regclass, 'change_log'::regclass)"""
    )
    found: dict[str, set[str]] = {tab: set() for tab in RELATING}
    for r in rows:
        found[r["tab"]].add(r["conname"])
        one_column = r["columns"] < 2 and r["conname"] not in KEPT_ON_ONE_COLUMN
        assert not one_column, f"{r['tab']}.{r['conname']} concerns one column: make it the column's domain"
    assert found == RELATING


# (statement, the domain constraint that refuses it). Each writes one bad value into a column of
# the todo or its attempt; %(id)s is the todo's id.
REFUSED = [
    ("UPDATE todos SET title = '' WHERE id = %(id)s", "todo_title_length"),
    ("UPDATE todos SET title = repeat('x', 501) WHERE id = %(id)s", "todo_title_length"),
    ("UPDATE todos SET idempotency_key = '' WHERE id = %(id)s", "idempotency_key_not_empty"),
    ("UPDATE todos SET max_attempts = 0 WHERE id = %(id)s", "attempt_limit_range"),
    ("UPDATE todos SET max_attempts = 101 WHERE id = %(id)s", "attempt_limit_range"),
    ("UPDATE todos SET concurrency_key = '' WHERE id = %(id)s", "concurrency_key_length"),
    ("UPDATE todos SET requires = ARRAY['a', NULL] WHERE id = %(id)s", "capability_labels_bounded"),
    ("UPDATE todo_attempts SET claimer_kind = 'robot' WHERE todo_id = %(id)s", "claimer_kind_known"),
    ("UPDATE todo_attempts SET claimant = repeat('x', 129) WHERE todo_id = %(id)s", "claimant_length"),
    (
        "UPDATE todo_attempts SET ended_at = now(), outcome = 'vanished', disposition = 'done' WHERE todo_id = %(id)s",
        "attempt_outcome_known",
    ),
    (
        "UPDATE todo_attempts SET ended_at = now(), outcome = 'completed', disposition = 'kept' WHERE todo_id = %(id)s",
        "attempt_disposition_known",
    ),
    ("UPDATE todo_attempts SET summary = repeat('x', 2049) WHERE todo_id = %(id)s", "attempt_summary_length"),
    ("UPDATE todo_attempts SET artifact = repeat('x', 513) WHERE todo_id = %(id)s", "attempt_artifact_length"),
    ("UPDATE todo_attempts SET lease_token_hash = '\\x00' WHERE todo_id = %(id)s", "lease_token_hash_length"),
    ("UPDATE todo_attempts SET ended_by = 'someone' WHERE todo_id = %(id)s", "ended_by_actor"),
    (
        """INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op)
           SELECT e.team_id, t.endpoint_id, t.id, t.queue, 'Not An Op'
           FROM todos t JOIN endpoints e ON e.id = t.endpoint_id WHERE t.id = %(id)s""",
        "change_op_word",
    ),
]


@pytest.mark.parametrize(("statement", "rule"), REFUSED, ids=[r for _, r in REFUSED])
def test_each_domain_refuses_what_its_check_refused_and_nothing_is_written(agent, statement, rule):
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo.id
    execute(agent_store.claim(agent, todo))
    before = one("SELECT * FROM todos WHERE id = %s", (todo,)), attempts(todo)
    with db.connect() as held:
        held.execute("SELECT pg_advisory_lock(%s)", (PASS_LOCK,))  # the relay leaves the change log be
        try:
            log = one("SELECT count(*) AS n FROM change_log")["n"]
            with db.connect() as conn, pytest.raises(CheckViolation) as caught:
                conn.execute(statement, {"id": todo})
            assert one("SELECT count(*) AS n FROM change_log")["n"] == log
        finally:
            held.execute("SELECT pg_advisory_unlock(%s)", (PASS_LOCK,))
    assert caught.value.diag.constraint_name == rule
    assert (one("SELECT * FROM todos WHERE id = %s", (todo,)), attempts(todo)) == before


def test_a_schedule_and_an_endpoint_share_the_todos_rules(world):
    """One rule, one name: a schedule's title and requirements and an endpoint's capabilities are
    of the same domains as a todo's."""
    with db.connect() as conn:
        for statement in (
            "UPDATE endpoints SET capabilities = ARRAY[NULL]::text[] WHERE id = %(e)s",
            "INSERT INTO schedules (team_id, name, cron, timezone, endpoint_id, queue, title, next_fire_at) "
            "SELECT team_id, 's', '* * * * *', 'UTC', id, 'default', '', now() FROM endpoints WHERE id = %(e)s",
        ):
            with pytest.raises(psycopg.errors.CheckViolation), conn.transaction():
                conn.execute(statement, {"e": world.agent.endpoint_id})
    assert one("SELECT capabilities FROM endpoints WHERE id = %s", (world.agent.endpoint_id,))["capabilities"] == []
    assert one("SELECT count(*) AS n FROM schedules")["n"] == 0

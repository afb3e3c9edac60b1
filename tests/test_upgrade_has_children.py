"""Upgrading to migration 0038 marks the parents children already wait for (``has_children``),
so their completes, under the new statements, still settle those children; a parent whose
children have settled, and a todo that is no parent, are left unmarked."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.common import fresh_database
from bench.serving import database_url
from tests.test_upgrade_counts import SEED, migrate
from todos.core import db

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("django_db_setup")]


def todo(i: int) -> str:
    return "td_" + str(i).rjust(32, "0")


# SEED's todo i is pending when i % 5 == 0 and done when i % 5 == 1. Todos 10 and 20 wait (blocked):
# 10 for 5 (open) and 1 (done, settled); 20 for 15 (open). 25 waited for 30, which settled.
EDGES = f"""
UPDATE todos SET next_retry_at = 'infinity', parents_left = 1 WHERE id IN ('{todo(10)}', '{todo(20)}');
INSERT INTO todo_dependencies (child_id, parent_id, settled) VALUES
    ('{todo(10)}', '{todo(5)}', false), ('{todo(10)}', '{todo(1)}', true),
    ('{todo(20)}', '{todo(15)}', false), ('{todo(25)}', '{todo(30)}', true);
"""


def test_migration_0038_marks_the_parents_that_children_wait_for():
    with fresh_database(db.conninfo(), "haschildren") as conninfo:
        url = database_url(conninfo)
        migrate(url, "todos", "0037_claim_miss_functions")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(SEED)
            conn.execute(EDGES)
        migrate(url, "todos", "0038_has_children")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            marked = [r["id"] for r in conn.execute("SELECT id FROM todos WHERE has_children ORDER BY id")]
            total = conn.execute("SELECT count(*) AS n FROM todos").fetchone()
    assert marked == [todo(5), todo(15)]
    assert total == {"n": 50}

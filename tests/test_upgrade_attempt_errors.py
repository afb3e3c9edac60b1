"""Upgrading to the attempt-errors migration adds ``todo_attempts.error`` without rewriting the
table: the column is added while its domain has no rule (a catalog change), and the rule is added
to the domain afterwards, which only reads the rows to validate them."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.common import fresh_database
from bench.serving import database_url
from tests.test_upgrade_counts import SEED, migrate
from tests.test_upgrade_domains import ATTEMPT
from todos.core import db

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("django_db_setup")]


def _snapshot(conn) -> dict:
    return {
        "file": conn.execute("SELECT pg_relation_filenode('todo_attempts') AS f").fetchone()["f"],
        "attempts": conn.execute(
            "SELECT todo_id, seq, outcome, summary FROM todo_attempts ORDER BY todo_id, seq"
        ).fetchall(),
    }


def test_the_error_column_is_added_without_rewriting_the_attempts():
    with fresh_database(db.conninfo(), "attempt_errors") as conninfo:
        url = database_url(conninfo)
        migrate(url, "todos", "0018_value_domains")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(SEED)
            conn.execute(ATTEMPT)
            before = _snapshot(conn)
        migrate(url, "todos", "0020_attempt_errors")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            after = _snapshot(conn)
            errors = conn.execute("SELECT count(*) AS n FROM todo_attempts WHERE error IS NOT NULL").fetchone()["n"]
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute('UPDATE todo_attempts SET error = \'{"type": 1, "truncated": false}\'')
    assert len(before["attempts"]) == 10
    assert after == before and errors == 0

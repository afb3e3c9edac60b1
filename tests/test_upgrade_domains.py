"""Upgrading to migration 0018 (single-column CHECKs become domains) keeps every row and rewrites
no table: a column moves to a domain with no rule first (binary-coercible), and the rule is added
to the domain afterwards, which only reads the rows to validate them."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.common import fresh_database
from bench.serving import database_url
from tests.test_upgrade_counts import SEED, migrate
from todos.core import db

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("django_db_setup")]

TABLES = ("todos", "todo_attempts", "change_log", "endpoints", "schedules", "concurrency_keys")

ATTEMPT = """
INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, owner, claimant, lease_expires_at, ended_at,
                           outcome, disposition, summary, lease_token_hash, ended_by)
SELECT id, 1, 1, 'owner', 'human:1', 'me', now(), now(), 'released', 'requeued', 'let go',
       decode(repeat('cd', 32), 'hex'), 'human:1'
FROM todos WHERE state = 'pending';
UPDATE todos SET concurrency_key = 'k', requires = '{gpu}', idempotency_key = 'key-' || id, max_attempts = 7;
"""


def _snapshot(conn) -> dict:
    return {
        "files": {
            t: conn.execute("SELECT pg_relation_filenode(%s::regclass) AS f", (t,)).fetchone()["f"] for t in TABLES
        },
        "todos": conn.execute("SELECT * FROM todos ORDER BY id").fetchall(),
        "attempts": conn.execute("SELECT * FROM todo_attempts ORDER BY todo_id, seq").fetchall(),
    }


def test_migration_0018_keeps_every_row_and_rewrites_no_table():
    with fresh_database(db.conninfo(), "domains") as conninfo:
        url = database_url(conninfo)
        migrate(url, "todos", "0017_take_concurrency_slot")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(SEED)
            conn.execute(ATTEMPT)
            before = _snapshot(conn)
        migrate(url, "todos", "0018_value_domains")  # this migration alone: later ones add columns
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            after = _snapshot(conn)
            types = {
                r["attname"]: r["typ"]
                for r in conn.execute(
                    """SELECT attname, atttypid::regtype::text AS typ FROM pg_attribute
                       WHERE attrelid = 'todos'::regclass AND attname IN ('title', 'requires', 'concurrency_key')"""
                ).fetchall()
            }
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute("UPDATE todos SET title = '' WHERE id = %s", (before["todos"][0]["id"],))
    assert after == before and len(before["attempts"]) == 10
    assert types == {"title": "todo_title", "requires": "capability_labels", "concurrency_key": "concurrency_key"}

"""Upgrading to migration 0034 parses the attempts already there: an old attempt's summary and
error are found by the search as a new one's are, and an attempt that said nothing stays NULL.
Upgrading on to 0035 (the column written by the statements, no longer generated) keeps them."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.common import fresh_database
from bench.serving import database_url
from tests.test_upgrade_counts import SEED, migrate
from todos.core import db

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("django_db_setup")]

ATTEMPTS = """
INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, owner, claimant, lease_expires_at, ended_at,
                           outcome, disposition, summary, error, lease_token_hash, ended_by)
SELECT id, 1, 1, 'owner', 'human:1', 'me', now(), now(), 'failed', 'dead_lettered',
       CASE WHEN n % 3 = 0 THEN 'disk stalled' END,
       CASE WHEN n % 3 = 1 THEN '{"type": "psycopg.errors.DiskFull", "message": "No space left",
                                 "truncated": false}'::jsonb END,
       decode(repeat('cd', 32), 'hex'), 'human:1'
FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM todos WHERE state = 'failed') f;
"""

FOUND = """
SELECT count(*) FILTER (WHERE search_doc @@ phraseto_tsquery('simple', 'DiskFull')) AS by_type,
       count(*) FILTER (WHERE search_doc @@ phraseto_tsquery('simple', 'no space left')) AS by_message,
       count(*) FILTER (WHERE search_doc @@ phraseto_tsquery('simple', 'disk stalled')) AS by_summary,
       count(*) FILTER (WHERE search_doc IS NULL) AS silent,
       count(*) AS attempts
FROM todo_attempts"""


def test_migration_0034_parses_the_attempts_already_there():
    with fresh_database(db.conninfo(), "searchdoc") as conninfo:
        url = database_url(conninfo)
        migrate(url, "todos", "0033_drop_global_finished_index")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(SEED)
            conn.execute(ATTEMPTS)
        migrate(url, "todos", "0034_attempt_search_document")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            found = conn.execute(FOUND).fetchone()
        migrate(url, "todos", "0035_attempt_search_document_written")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            kept = conn.execute(FOUND).fetchone()
            generated = conn.execute(
                """SELECT attgenerated FROM pg_attribute
                   WHERE attrelid = 'todo_attempts'::regclass AND attname = 'search_doc'"""
            ).fetchone()
    # 20 failed todos, one attempt each: 7 with an error, 6 with a summary, 7 that said nothing
    assert found == {"by_type": 7, "by_message": 7, "by_summary": 6, "silent": 7, "attempts": 20}
    assert kept == found and generated == {"attgenerated": ""}

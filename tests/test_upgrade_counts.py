"""Upgrading an installation that already has todos: migration 0006 counts them, so the Board's
counts are exact from the first page after the upgrade (docs/deployment.md, upgrading)."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.common import fresh_database
from bench.serving import database_url
from tests.support.live_server import ROOT, server_environment
from todos.core import db

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("django_db_setup")]

SEED = """
INSERT INTO teams (id, slug, name) VALUES ('00000000-0000-4000-8000-00000000a001', 'acme', 'Acme');
INSERT INTO endpoints (id, team_id, slug, name, credential_hash, credential_prefix, scope_verbs, scope_queues)
VALUES ('00000000-0000-4000-8000-00000000e001', '00000000-0000-4000-8000-00000000a001', 'worker', 'Worker',
        decode(repeat('ab', 32), 'hex'), 'bd_x', '{claim}', '{default,email}');
INSERT INTO todos (id, endpoint_id, queue, title, state, next_retry_at, completed_at, owner, lease_expires_at)
SELECT 'td_' || lpad(i::text, 32, '0'), '00000000-0000-4000-8000-00000000e001',
       CASE WHEN i % 2 = 0 THEN 'default' ELSE 'email' END, 't',
       (ARRAY['pending', 'done', 'failed', 'failed', 'canceled'])[i % 5 + 1],
       CASE WHEN i % 5 = 2 THEN now() + interval '1 minute' END,
       CASE WHEN i % 5 IN (1, 3, 4) THEN now() - interval '5 minutes' END,
       NULL, NULL
FROM generate_series(1, 50) i;
"""


def migrate(url: str, *target: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", *target, "--verbosity", "0"],
        cwd=ROOT,
        env=server_environment(DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_migration_0006_counts_the_todos_already_there():
    with fresh_database(db.conninfo(), "upgrade") as conninfo:
        url = database_url(conninfo)
        migrate(url, "todos", "0005_assignee_index")
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(SEED)
        migrate(url)
        with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
            counted = {(r["queue"], r["state"]): r["n"] for r in conn.execute("SELECT * FROM todo_counts").fetchall()}
            actual = {
                (r["queue"], r["s"]): r["n"]
                for r in conn.execute(
                    "SELECT queue, todo_board_state(state, next_retry_at) AS s, count(*) AS n FROM todos GROUP BY 1, 2"
                ).fetchall()
            }
            finished = conn.execute("SELECT sum(done) AS done, sum(dead) AS dead FROM todo_finished_minutes").fetchone()
    assert counted == actual and len(actual) == 10  # 2 queues × pending, done, retry, dead, canceled
    assert (finished["done"], finished["dead"]) == (10, 10)

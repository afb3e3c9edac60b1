"""The Board at scale: 5,000,000 todos, every page rendered in-process.

    uv run --group bench python -m bench.board_scale                 # loads once (~10-20 min), then times
    uv run --group bench python -m bench.board_scale --runs 30       # reuses the loaded database
    uv run --group bench python -m bench.board_scale --reload        # a fresh load
    uv run --group bench python -m bench.board_scale --smoke         # 3,000 rows, a throwaway database

The database lives in a fixed data directory (``--data-dir``, default ``/tmp/board-bench-scale``;
a few GB) and is kept between runs: loading 5M rows is the slow part, and a page's speed depends
on the table, not on how it was filled. With ``DATABASE_URL`` set, that server's database
``bench_board_scale`` is used (and kept) instead.

The data, generated set-based (``INSERT … SELECT generate_series`` in chunks of 250,000, with the
todo table's secondary indexes dropped during the load and rebuilt after it, then
``VACUUM (ANALYZE)``):

* 5 teams, 50 endpoints (10 per team), 20 queues (each endpoint scoped to 3), skewed so a few
  endpoints hold most of the work, as in life;
* todos created over 30 days, oldest first; all but the newest 20,000 are finished (94 % done,
  4 % canceled, 2 % dead letters); the newest 20,000 are the live edge (60 % pending, 1 % claimed,
  2 % retry scheduled, 5 % dead letters, 2 % canceled, 30 % done); 1 % assigned to the timed
  human, 5 % with a priority;
* about 10M attempts, ~2 per todo, all kept (none pruned), written in the same statement as their
  todos: one or two for a lease in flight or a retry window, two to four for a dead letter, one to
  four for a done todo. A todo's last attempt ended as it did; an earlier one failed (60 %) or
  lost its lease (40 %). Failed attempts carry a summary and, four in five, an ``error`` object:
  one of 30 types (``psycopg.errors.DiskFull``, ``httpx.ReadTimeout``, ``KeyError``…), the common
  ones often, a rare one (``LicenseExpired``) about once in 20,000, a message that varies by a
  number, and most a traceback of 1-4 KB. The last attempt of each endpoint's newest dead letter
  carries a 64 KB traceback (the drawer's target). The attempts' keys, foreign keys and indexes
  are dropped during the load and rebuilt after it, like the todos' indexes.

What is timed: server-side rendering, through Django's test ``Client`` in this process (session,
middleware, selectors, templates: everything but the socket), signed in as an operator of **one
team** (10 endpoints) and as an operator of **all five teams** (50 endpoints). Each URL ``--runs``
times after two warm-ups, URLs shuffled within every run so drift in the machine's load hits them
alike; p50 / p95 / max per URL. Beside them, in the same runs, the plain
``SELECT state, count(*) FROM todos GROUP BY state``. Targets: every page ≤ 50 ms p95, and at
least 10× faster than that count; the operator's-depth pages (search by what attempts said, the
kind, priority, created and finished day and "failed with" filters, a combination) ≤ 100 ms p95,
and the drawer of a todo whose attempt carries a 64 KB traceback ≤ 50 ms p95.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import base_parser, one_row, print_table, setup_django
from bench.serving import LoadSampler, load_average, percentile

DEFAULT_DIR = Path(os.environ.get("BOARD_BENCH_SCALE_DIR", "/tmp/board-bench-scale"))
DBNAME = "bench_board_scale"
TEAMS, ENDPOINTS, QUEUES = 5, 50, 20
RECENT = 20_000  # the live edge: the newest todos
SPAN = "30 days"
CHUNK = 250_000
ME, ALL = "scale-one-team", "scale-all-teams"


# --- the database -------------------------------------------------------------------------------


def use_database(data_dir: Path, dbname: str = DBNAME) -> str:
    """Point Django and the store's pools at ``dbname`` (embedded server in ``data_dir``, kept at
    exit; or ``DATABASE_URL``'s server), migrate it, and return its conninfo."""
    setup_django()
    import psycopg
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections
    from psycopg import sql

    from todos.core import db

    config = settings.DATABASES["default"]
    if settings.DATABASE_URL:
        with psycopg.connect(db.conninfo(), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    else:
        settings.BOARD_DATA_DIR = Path(data_dir)
        settings.BOARD_DATA_DIR_EPHEMERAL = False
    connections.close_all()
    config["NAME"] = dbname
    db.reset_pools()
    call_command("migrate", verbosity=0, interactive=False)
    connections.close_all()
    return db.conninfo()


def loaded_rows(conn) -> int | None:
    conn.execute("CREATE TABLE IF NOT EXISTS bench_scale_meta (rows bigint NOT NULL, loaded_at timestamptz NOT NULL)")
    row = conn.execute("SELECT rows FROM bench_scale_meta ORDER BY loaded_at DESC LIMIT 1").fetchone()
    return row["rows"] if row else None


def make_tenancy(conn) -> dict:
    """Teams, endpoints and the two timed humans (the store's own statements), or the existing ones."""
    from django.contrib.auth import get_user_model

    from todos.core.db import execute
    from todos.core.store import endpoints, teams
    from todos.core.store.endpoints import SCOPE_VERBS

    User = get_user_model()
    team_ids = [r["id"] for r in conn.execute("SELECT id FROM teams WHERE slug LIKE 'scale-team-%%' ORDER BY slug")]
    if len(team_ids) != TEAMS:
        team_ids = [
            execute(teams.create_team(slug=f"scale-team-{t}", name=f"Scale team {t}"), conn).id for t in range(TEAMS)
        ]
        for e in range(ENDPOINTS):
            queues = sorted({f"q{(e + d) % QUEUES:02d}" for d in (0, 7, 13)})
            execute(
                endpoints.vend(
                    None,
                    team_id=team_ids[e % TEAMS],
                    name=f"Scale endpoint {e:02d}",
                    slug=f"scale-ep-{e:02d}",
                    verbs=list(SCOPE_VERBS),
                    queues=queues,
                ),
                conn,
            )
    users = {}
    for username, member_of in ((ME, team_ids[:1]), (ALL, team_ids)):
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User(username=username)
            user.set_unusable_password()
            user.save()
            for team_id in member_of:
                execute(teams.set_member(None, team_id=team_id, user_id=user.id, role="operator"), conn)
        users[username] = user
    return {"teams": team_ids, "users": users}


# How many attempts a todo has had, by its fate (``k.kind``): none before a claim, one or two for
# a lease in flight or a retry window, two to four for a dead letter, one to four (2.05 on average)
# for a done todo: about 10M attempts for 5M todos, all kept (none pruned).
ATTEMPTS_OF = """CASE k.kind WHEN 'pending' THEN 0 WHEN 'canceled' THEN 0
        WHEN 'claimed' THEN 1 + g.i %% 2 WHEN 'retry' THEN 1 + g.i %% 2 WHEN 'dead' THEN 2 + g.i %% 3
        ELSE CASE WHEN g.ra < 0.35 THEN 1 WHEN g.ra < 0.65 THEN 2 WHEN g.ra < 0.95 THEN 3 ELSE 4 END END"""

# One statement per chunk: the todos, and (a data-modifying CTE feeding the second INSERT) their
# attempts, so each chunk's attempts are written while its todos are still in memory.
TODOS_INSERT = f"""
WITH ins AS (
INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, assignee, priority, state, owner,
                   lease_expires_at, attempt, attempts_total, attempts_pruned, next_retry_at, result,
                   created_at, updated_at, claimed_at, completed_at)
SELECT 'td_' || md5('scale' || g.i), e.id, e.queues[1 + floor(g.r2 * 3)::int], 'ci',
       (ARRAY['build', 'test', 'deploy', 'lint', 'review'])[1 + g.i %% 5],
       'Build ' || g.i || ' of repo-' || (g.i %% 500),
       jsonb_build_object('repo', 'repo-' || (g.i %% 500), 'n', g.i, 'branch', CASE WHEN g.i %% 7 = 0 THEN 'dev' ELSE 'main' END),
       CASE WHEN g.r3 < 0.01 THEN %(me)s END,
       CASE WHEN g.r3 > 0.95 THEN (1 + g.i %% 5)::smallint ELSE 0::smallint END,
       CASE WHEN k.kind IN ('retry', 'dead') THEN 'failed' ELSE k.kind END,
       CASE WHEN k.kind = 'claimed' THEN 'endpoint:' || e.id END,
       CASE WHEN k.kind = 'claimed' THEN now() + interval '10 minutes' END,
       n.n, n.n, 0,
       CASE WHEN k.kind = 'retry' THEN now() + g.r2 * interval '10 minutes' END,
       CASE WHEN k.kind = 'done' THEN '{{"ok": true}}'::jsonb END,
       c.at, coalesce(d.at, c.at),
       CASE WHEN k.kind NOT IN ('pending', 'canceled') THEN least(now(), c.at + interval '1 minute') END,
       d.at
FROM (SELECT i, random() AS r1, random() AS r2, random() AS r3, random() AS rs, random() AS ra
      FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS i) g
JOIN bench_scale_eps e ON e.idx = floor({ENDPOINTS} * power(g.r1, 2))::int
CROSS JOIN LATERAL (SELECT CASE
    WHEN g.i > %(n)s - {RECENT} THEN CASE WHEN g.rs < 0.60 THEN 'pending' WHEN g.rs < 0.61 THEN 'claimed'
        WHEN g.rs < 0.63 THEN 'retry' WHEN g.rs < 0.68 THEN 'dead' WHEN g.rs < 0.70 THEN 'canceled' ELSE 'done' END
    ELSE CASE WHEN g.rs < 0.02 THEN 'dead' WHEN g.rs < 0.06 THEN 'canceled' ELSE 'done' END END AS kind) k
CROSS JOIN LATERAL (SELECT {ATTEMPTS_OF} AS n) n
CROSS JOIN LATERAL (SELECT now() - interval '{SPAN}' * (1 - g.i::float8 / %(n)s) AS at) c
CROSS JOIN LATERAL (SELECT CASE WHEN k.kind IN ('done', 'canceled', 'dead')
                                THEN least(now(), c.at + g.r2 * interval '20 minutes') END AS at) d
RETURNING id, endpoint_id, state, next_retry_at, lease_expires_at, attempts_total, created_at, completed_at
)
{{attempts}}
"""

# Each attempt of a todo: the last one ends as the todo did (open while claimed, completed, dead
# lettered, a retry window); an earlier one failed with an error (60 %) or lost its lease (40 %).
# An error is one of bench_scale_errors, the common ones often, the last of them (idx -1) about
# once in 20,000; its message varies by a number, and most carry a traceback of 1-4 KB.
ATTEMPTS_FROM = """
INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, claimer_endpoint_id, owner, claimed_at,
                           lease_expires_at, ended_at, outcome, disposition, summary, error, search_doc)
SELECT q.*, {search_doc} FROM (
SELECT t.id, s.seq, s.seq, 'endpoint', t.endpoint_id, 'endpoint:' || t.endpoint_id, w.claimed_at,
       CASE WHEN k.how = 'open' THEN t.lease_expires_at ELSE w.claimed_at + interval '5 minutes' END,
       CASE WHEN k.how <> 'open' THEN w.ended_at END,
       CASE k.how WHEN 'open' THEN NULL WHEN 'done' THEN 'completed' WHEN 'lapsed' THEN 'lease_expired' ELSE 'failed' END,
       CASE k.how WHEN 'open' THEN NULL WHEN 'done' THEN 'done' WHEN 'lapsed' THEN 'requeued'
                  WHEN 'dead' THEN 'dead_lettered' ELSE 'retry_scheduled' END,
       CASE WHEN k.how IN ('retry', 'dead') THEN 'exit code 1: ' || (1 + x.h %% 9) || ' tests failed' END AS summary,
       CASE WHEN k.how IN ('retry', 'dead') AND x.h %% 5 <> 0 THEN
           jsonb_build_object('type', r.type, 'truncated', false)
           || CASE WHEN m.message <> '' THEN jsonb_build_object('message', m.message) ELSE '{}'::jsonb END
           || CASE WHEN r.traceback IS NOT NULL
                   THEN jsonb_build_object('traceback', r.traceback || E'\\n' || r.type || ': ' || m.message)
                   ELSE '{}'::jsonb END
       END AS error
FROM {source} t
CROSS JOIN LATERAL generate_series(1, t.attempts_total) AS s(seq)
CROSS JOIN LATERAL (SELECT abs(hashtext(t.id || s.seq)::bigint) AS h,
                           coalesce(t.completed_at, now()) - t.created_at AS span) x
CROSS JOIN LATERAL (SELECT CASE
    WHEN s.seq = t.attempts_total THEN CASE WHEN t.state = 'claimed' THEN 'open' WHEN t.state = 'done' THEN 'done'
                                            WHEN t.next_retry_at IS NULL THEN 'dead' ELSE 'retry' END
    WHEN x.h %% 10 < 4 THEN 'lapsed' ELSE 'retry' END AS how) k
CROSS JOIN LATERAL (SELECT t.created_at + x.span * (s.seq - 0.9) / t.attempts_total AS claimed_at,
                           CASE WHEN s.seq = t.attempts_total AND t.completed_at IS NOT NULL THEN t.completed_at
                                ELSE t.created_at + x.span * (s.seq - 0.2) / t.attempts_total END AS ended_at) w
JOIN bench_scale_errors r
  ON r.idx = CASE WHEN x.h %% 20011 = 7 THEN -1
                  ELSE floor(%(errors)s * power((x.h %% 10007) / 10007.0, 2))::int END
CROSS JOIN LATERAL (SELECT replace(r.message, '{n}', (x.h %% 9973)::text) AS message) m
) q
"""

# (type, message with {n} for a number that varies, frames of its traceback or 0 for none).
ERRORS: list[tuple[str, str, int]] = [
    ("TimeoutError", "timed out after {n} ms waiting for the build runner", 12),
    ("httpx.ReadTimeout", "The read operation timed out (artifact store, request {n})", 18),
    ("psycopg.errors.DiskFull", 'could not extend file "base/16384/{n}": No space left on device', 22),
    ("KeyError", "'step_{n}'", 9),
    ("subprocess.CalledProcessError", "Command '['make', 'test']' returned non-zero exit status {n}.", 14),
    ("ConnectionResetError", "[Errno 104] Connection reset by peer (worker {n})", 16),
    ("httpx.ConnectError", "[Errno 111] Connection refused: registry-{n}.internal:5000", 20),
    ("AssertionError", "expected 200 responses, got {n}", 8),
    ("ValueError", "invalid literal for int() with base 10: 'v{n}'", 10),
    (
        "psycopg.errors.DeadlockDetected",
        "deadlock detected\nDETAIL: Process {n} waits for ShareLock on transaction",
        24,
    ),
    ("OSError", "[Errno 28] No space left on device: '/tmp/build-{n}'", 11),
    ("MemoryError", "", 30),
    ("PermissionError", "[Errno 13] Permission denied: '/srv/cache/{n}.lock'", 7),
    ("httpx.HTTPStatusError", "Server error '503 Service Unavailable' for url 'https://api.internal/v1/jobs/{n}'", 19),
    ("FileNotFoundError", "[Errno 2] No such file or directory: 'dist/app-{n}.whl'", 9),
    ("json.decoder.JSONDecodeError", "Expecting value: line 1 column {n} (char {n})", 13),
    ("RuntimeError", "the lockfile is out of date (checked {n} packages)", 6),
    (
        "psycopg.OperationalError",
        'connection to server at "db-{n}" failed: server closed the connection unexpectedly',
        21,
    ),
    ("TypeError", "unsupported operand type(s) for +: 'int' and 'NoneType' (row {n})", 12),
    ("docker.errors.APIError", "500 Server Error: pull access denied for image build-{n}", 17),
    (
        "botocore.exceptions.ClientError",
        "An error occurred (SlowDown) when calling the PutObject operation: retry {n}",
        25,
    ),
    ("IndexError", "list index out of range", 8),
    (
        "ssl.SSLCertVerificationError",
        "certificate verify failed: unable to get local issuer certificate (host {n})",
        15,
    ),
    ("UnicodeDecodeError", "'utf-8' codec can't decode byte 0xff in position {n}: invalid start byte", 10),
    ("ZeroDivisionError", "division by zero", 5),
    ("asyncio.CancelledError", "", 0),
    ("git.exc.GitCommandError", "Cmd('git') failed due to: exit code({n})", 0),
    ("NotImplementedError", "the {n}th target platform is not supported", 0),
    ("PIL.UnidentifiedImageError", "cannot identify image file 'screenshots/{n}.png'", 0),
    ("redis.exceptions.ResponseError", "OOM command not allowed when used memory > 'maxmemory' (key {n})", 0),
]
# Rare on purpose: about one error in 20,000.
RARE_ERROR = ("LicenseExpired", "the signing key expired on day {n} of the contract: renew it", 6)
RARE_PHRASE = "signing key expired"

ERRORS_TABLE = """
CREATE TEMP TABLE bench_scale_errors AS
SELECT idx, type, message,
       CASE WHEN frames > 0 THEN 'Traceback (most recent call last):' || (
           SELECT string_agg(E'\\n  File "/srv/worker/jobs/' || lower(replace(type, '.', '_')) || '/step_' || f
                             || '.py", line ' || (f * 37 + idx + 11) || ', in run_step_' || f
                             || E'\\n    result = handler.process(payload, attempt=attempt, options=options)', '')
           FROM generate_series(1, frames * 2) AS f) END AS traceback
FROM jsonb_to_recordset(%(errors)s::jsonb) AS e(idx int, type text, message text, frames int)
"""

# A handful of attempts with a traceback of the domain's 64 KB (the store keeps the last 64 KB
# and says ``truncated``): the last attempt of each endpoint's newest dead letter, the drawer's
# target.
LONG_TRACEBACKS = """
UPDATE todo_attempts a SET error = jsonb_build_object(
    'type', 'RecursionError', 'message', 'maximum recursion depth exceeded while calling a Python object',
    'truncated', true,
    'traceback', right('Traceback (most recent call last):' || repeat(
        E'\\n  File "/srv/worker/jobs/tree.py", line 88, in visit\\n    return visit(node.children[0], depth + 1)', 800)
        || E'\\nRecursionError: maximum recursion depth exceeded while calling a Python object', 65536))
FROM (SELECT DISTINCT ON (endpoint_id) id, attempts_total FROM todos
      WHERE state = 'failed' AND next_retry_at IS NULL ORDER BY endpoint_id, created_at DESC) d
WHERE a.todo_id = d.id AND a.seq = d.attempts_total
"""

# The same attempts' search documents, as the store writes them (``fragments.search_document``).
LONG_TRACEBACK_DOCUMENTS = """
UPDATE todo_attempts a SET {search_doc}
FROM (SELECT DISTINCT ON (endpoint_id) id, attempts_total FROM todos
      WHERE state = 'failed' AND next_retry_at IS NULL ORDER BY endpoint_id, created_at DESC) d
WHERE a.todo_id = d.id AND a.seq = d.attempts_total
"""


def errors_json() -> str:
    import json

    rows = [{"idx": n, "type": t, "message": m, "frames": f} for n, (t, m, f) in enumerate(ERRORS)]
    rows.append({"idx": -1, "type": RARE_ERROR[0], "message": RARE_ERROR[1], "frames": RARE_ERROR[2]})
    return json.dumps(rows)


def _detached(conn, table: str, drop: bool) -> list[str]:
    """Drop ``table``'s secondary indexes (and for the attempts, its keys and exclusion) for the
    load; return the statements that put them back."""
    if not drop:
        return []
    restore = []
    kinds = "('p', 'f', 'x')" if table == "todo_attempts" else "('x')"  # the todos keep their key
    for c in conn.execute(
        f"SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = '{table}'::regclass AND contype IN {kinds}"
    ).fetchall():
        conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{c["conname"]}"')
        restore.append(f'ALTER TABLE {table} ADD CONSTRAINT "{c["conname"]}" {c["def"]}')
    for ix in conn.execute(f"""SELECT indexname, indexdef FROM pg_indexes WHERE tablename = '{table}'
                              AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = '{table}'::regclass)""").fetchall():
        conn.execute(f'DROP INDEX "{ix["indexname"]}"')
        restore.append(ix["indexdef"])
    # primary keys first: the foreign keys' validation probes them
    return sorted(restore, key=lambda s: "PRIMARY KEY" not in s)


# The failed todos' reason groups, as the statements that fail a todo store them (the rows went in
# behind the store's back): the backfill of 0029_search_indexes.
REASON_GROUPS = """
UPDATE todos t SET failure_reason_group = (
    SELECT board_reason_group(a.error, a.summary, t.result->>'error')
    FROM (SELECT 1) one LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total)
WHERE t.state = 'failed'"""


def load(conn, rows: int, tenancy: dict, *, drop_indexes: bool = True, log=print) -> None:
    """Replace the todos and attempts with ``rows`` generated todos (see the module's docstring)."""
    me = f"human:{tenancy['users'][ME].id}"
    conn.execute("SELECT setseed(0.42)")
    conn.execute("SET synchronous_commit = off")
    conn.execute("SET maintenance_work_mem = '512MB'")
    conn.execute("TRUNCATE todos, todo_attempts, todo_dependencies")
    conn.execute("DROP TABLE IF EXISTS bench_scale_eps")
    conn.execute("CREATE TABLE bench_scale_eps (idx int PRIMARY KEY, id uuid NOT NULL, queues text[] NOT NULL)")
    conn.execute("""INSERT INTO bench_scale_eps
                    SELECT (row_number() OVER (ORDER BY slug)) - 1, id, scope_queues FROM endpoints
                    WHERE slug LIKE 'scale-ep-%%'""")
    conn.execute("DROP TABLE IF EXISTS bench_scale_errors")
    conn.execute(ERRORS_TABLE, {"errors": errors_json()})
    attempts_restore = _detached(conn, "todo_attempts", drop_indexes)
    todos_restore = _detached(conn, "todos", drop_indexes)
    from todos.core.store.fragments import search_document, search_document_value

    attempts = ATTEMPTS_FROM.replace("{source}", "ins").replace(
        "{search_doc}", search_document_value("q.error", "q.summary")
    )
    statement = TODOS_INSERT.replace("{attempts}", attempts)
    started = time.monotonic()
    for lo in range(1, rows + 1, CHUNK):
        hi = min(rows, lo + CHUNK - 1)
        conn.execute(statement, {"lo": lo, "hi": hi, "n": rows, "me": me, "errors": len(ERRORS)})
        log(f"  todos {hi:,} / {rows:,} with their attempts ({time.monotonic() - started:.0f} s)")
    for ddl in todos_restore + attempts_restore:
        conn.execute(ddl)
        log(f"  {ddl[:70]}… rebuilt ({time.monotonic() - started:.0f} s)")
    conn.execute(LONG_TRACEBACKS)
    conn.execute(LONG_TRACEBACK_DOCUMENTS.replace("{search_doc}", search_document("a.error", "a.summary")))
    log(f"  64 KB tracebacks written ({time.monotonic() - started:.0f} s)")
    conn.execute(REASON_GROUPS)
    log(f"  failed todos' reason groups stored ({time.monotonic() - started:.0f} s)")
    conn.execute("DROP TABLE bench_scale_eps")
    conn.execute("DROP TABLE bench_scale_errors")
    conn.execute("VACUUM (ANALYZE) todos")
    conn.execute("VACUUM (ANALYZE) todo_attempts")
    conn.execute("CHECKPOINT")
    conn.execute("DELETE FROM bench_scale_meta")
    conn.execute("INSERT INTO bench_scale_meta VALUES (%s, now())", (rows,))
    log(f"  vacuumed and analysed ({time.monotonic() - started:.0f} s)")
    # The rows went in behind the store's back (no change log): the counts are rebuilt, as
    # ``manage.py recount`` would after a restore.
    from todos.live.relay import rebuild_counts

    rebuild_counts(conn)
    log(f"  counts rebuilt ({time.monotonic() - started:.0f} s)")


# --- the pages -------------------------------------------------------------------------------------


@dataclass
class Page:
    name: str
    url: str
    target_ms: int = 50  # p95
    depth: bool = False  # an operator's-depth page: its own target, no ratio to the GROUP BY


def depth_pages(conn, viewer, eps: list) -> list[Page]:
    """The operator's-depth pages: search by what attempts said, the filters on a todo's own
    columns, and the drawer of a todo whose attempt carries a 64 KB traceback."""
    from datetime import UTC, datetime, timedelta
    from urllib.parse import urlencode

    from todos.core.filters import TodoFilter
    from todos.core.selectors.dead_letters import groups

    def page(name: str, target: int = 100, **query) -> Page:
        return Page(name, "/todos/?" + urlencode(query), target, True)

    today = datetime.now(UTC).date()
    day = (today - timedelta(days=14)).isoformat()
    week_from, week_to = (today - timedelta(days=20)).isoformat(), (today - timedelta(days=14)).isoformat()
    found, _ = groups(viewer, TodoFilter())
    pages = [
        page("search: error type, common (DiskFull)", q="DiskFull"),
        page(f"search: error phrase, rare ({RARE_PHRASE})", q=RARE_PHRASE),
        page("search: error phrase in dead letters (No space left)", state="dead", q="No space left"),
        page("filter: kind=deploy", kind="deploy"),
        page("filter: priority=5", priority="5"),
        page("filter: priority=0..10", priority="0..10"),
        page("filter: created on one day (14 days back)", created_from=day, created_to=day),
        page("filter: finished on one day (14 days back)", finished_from=day, finished_to=day),
        page("filter: created in a week, done", state="done", created_from=week_from, created_to=week_to),
    ]
    if found:
        common, rare = found[0].fingerprint, found[-1].fingerprint
        pages += [
            page("filter: failed with (largest group)", failed_with=common),
            page("filter: failed with (largest group), dead", state="dead", failed_with=common),
            page("filter: failed with (smallest group), dead", state="dead", failed_with=rare),
            page(
                "combination: dead, kind, priority, created week, failed with",
                state="dead",
                kind="deploy",
                priority="0..10",
                created_from=week_from,
                created_to=week_to,
                failed_with=common,
            ),
        ]
    pages.append(
        page(
            "combination: kind, priority, created week, error search",
            kind="test",
            priority="0..5",
            created_from=week_from,
            created_to=week_to,
            q="DiskFull",
        )
    )
    long = conn.execute(
        """SELECT t.id FROM todos t JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total
           WHERE t.endpoint_id = ANY(%(eps)s) AND t.state = 'failed' AND t.next_retry_at IS NULL
             AND octet_length(a.error->>'traceback') > 60000
           ORDER BY t.created_at DESC LIMIT 1""",
        {"eps": eps},
    ).fetchone()
    if long:
        pages.append(Page("drawer, 64 KB traceback", f"/todos/{long['id']}/drawer/", 50, True))
    return pages


def pages_for(conn, user, team_ids: list) -> list[Page]:
    """Every page the figure names, for this human (ids and cursors picked from their own rows)."""
    from urllib.parse import urlencode

    from todos.core.filters import Cursor
    from todos.core.selectors.access import viewer_for

    viewer = viewer_for(user)
    eps = viewer.endpoint_ids
    deep = conn.execute(
        """SELECT created_at, id FROM todos WHERE endpoint_id = ANY(%(eps)s)
                           AND created_at < now() - interval '15 days'
                           ORDER BY created_at DESC, id DESC LIMIT 1""",
        {"eps": eps},
    ).fetchone()
    drawer = conn.execute(
        """SELECT t.id FROM todos t WHERE t.endpoint_id = ANY(%(eps)s) AND t.state = 'failed'
                             AND t.next_retry_at IS NULL AND t.attempts_pruned = 0 ORDER BY t.created_at DESC LIMIT 1""",
        {"eps": eps},
    ).fetchone()
    busiest = conn.execute(
        """SELECT e.slug, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
                              WHERE t.endpoint_id = ANY(%(eps)s) AND t.created_at > now() - interval '1 day'
                              GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1""",
        {"eps": eps},
    ).fetchone()
    pages = [Page("todo list, first page", "/todos/")]
    if deep:
        pages.append(
            Page(
                "todo list, deep keyset page (15 days back)",
                "/todos/?" + urlencode({"after": Cursor(deep["created_at"], deep["id"]).encode()}),
            )
        )
    for state in ("pending", "claimed", "retry", "dead", "done", "canceled"):
        pages.append(Page(f"filter: state={state}", f"/todos/?state={state}"))
    if busiest:
        pages.append(Page(f"filter: queue (busiest, {busiest['queue']})", f"/todos/?queue={busiest['queue']}"))
        pages.append(Page(f"filter: endpoint (busiest, {busiest['slug']})", f"/todos/?endpoint={busiest['slug']}"))
    pages += [
        Page("filter: assigned to me", "/todos/?mine=1"),
        Page("filter: pending, priority order", "/todos/?state=pending&sort=priority"),
        Page("search: text, common (repo-42)", "/todos/?q=repo-42"),
        Page("search: text, no match", "/todos/?q=no-such-thing"),
        Page("search: payload key=value", "/todos/?q=repo%3Drepo-42"),
        Page("state counts region", "/todos/counts/"),
        Page("overview (per-queue counts)", "/"),
    ]
    if drawer:
        pages.append(Page("drawer (dead letter with attempts)", f"/todos/{drawer['id']}/drawer/"))
        pages.append(Page("one row (live refresh)", f"/todos/{drawer['id']}/row/"))
    return pages + depth_pages(conn, viewer, eps)


GROUP_BY = "SELECT state, count(*) FROM todos GROUP BY state"
# A page whose first render takes longer than this is not rendered again (at seconds to minutes a
# render, 25 runs would take an hour): it is reported with that one render.
SLOW_MS = 2_000


def time_pages(
    conninfo: str, users: dict, team_ids: list, runs: int, *, warmups: int = 2, only: str = "", log=print
) -> dict:
    """Per (human, page): the render times in ms; plus the plain GROUP BY's, in the same runs."""
    from django.test import Client

    from bench.common import connect

    clients, pages = {}, {}
    with connect(conninfo) as conn:
        for label, user in users.items():
            client = Client()
            client.force_login(user)
            clients[label] = client
            pages[label] = [p for p in pages_for(conn, user, team_ids) if only in p.name]
    times: dict[tuple[str, str], list[float]] = {}
    group_by: list[float] = []
    plan = [(label, page) for label in clients for page in pages[label]]
    rng = random.Random(8)
    slow: set = set()
    with connect(conninfo) as conn:
        for run in range(warmups + runs):
            rng.shuffle(plan)
            for label, page in plan:
                key = (label, page.name)
                if key in slow:
                    continue  # pathological: its one render says enough
                started = time.perf_counter()
                response = clients[label].get(page.url)
                elapsed = (time.perf_counter() - started) * 1000
                if response.status_code != 200:
                    raise RuntimeError(f"{page.url} as {label}: HTTP {response.status_code}")
                if run >= warmups or elapsed > SLOW_MS:
                    times.setdefault(key, []).append(elapsed)
                if elapsed > SLOW_MS and run < warmups:
                    slow.add(key)
                    log(f"  {page.name} as {label}: {elapsed:,.0f} ms on its first render; not rendered again")
            started = time.perf_counter()
            conn.execute(GROUP_BY).fetchall()
            if run >= warmups:
                group_by.append((time.perf_counter() - started) * 1000)
            log(
                f"  run {run + 1 - warmups if run >= warmups else 'warm-up'}: GROUP BY {group_by[-1] if group_by and run >= warmups else 0:,.0f} ms; load {load_average()}"
            )
    return {"times": times, "group_by": group_by, "pages": pages}


COUNT_PAGES = ("state counts region", "overview (per-queue counts)")
COUNT_TARGET_MS = 20


def counts_are_exact(conninfo: str, users: dict) -> list[list]:
    """The state tabs and the overview's totals against GROUP BY over the human's todos: equal."""
    from bench.common import connect
    from todos.core.filters import TodoFilter
    from todos.core.selectors.access import viewer_for
    from todos.core.selectors.overview import overview
    from todos.core.selectors.todo_counts import state_counts

    rows = []
    with connect(conninfo) as conn:
        for label, user in users.items():
            viewer = viewer_for(user)
            truth = {
                r["s"]: r["n"]
                for r in conn.execute(
                    """SELECT todo_board_state(state, next_retry_at) AS s, count(*) AS n FROM todos
                   WHERE endpoint_id = ANY(%(eps)s) GROUP BY 1""",
                    {"eps": viewer.endpoint_ids},
                ).fetchall()
            }
            tabs = state_counts(viewer, TodoFilter())
            totals = overview(viewer).totals
            shown = {key: tabs[key].value for key in truth}
            ok = (
                shown == truth
                and not any(c.capped for c in tabs.values())
                and all(
                    getattr(totals, name) == truth.get(state, 0)
                    for name, state in (
                        ("pending", "pending"),
                        ("claimed", "claimed"),
                        ("retry", "retry"),
                        ("dead", "dead"),
                    )
                )
            )
            rows.append(
                [label, ", ".join(f"{k} {v:,}" for k, v in sorted(truth.items())), "exact" if ok else "NOT exact"]
            )
            if not ok:
                raise RuntimeError(f"counts differ for {label}: tabs {shown}, GROUP BY {truth}")
    return rows


def distribution(conninfo: str) -> list[list]:
    from bench.common import connect

    with connect(conninfo) as conn:
        rows = conn.execute("""SELECT CASE WHEN state = 'failed' AND next_retry_at IS NULL THEN 'dead letter'
                                           WHEN state = 'failed' THEN 'retry scheduled' ELSE state END AS s, count(*) AS n
                               FROM todos GROUP BY 1 ORDER BY 2 DESC""").fetchall()
        size = one_row(
            conn.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('todos')) AS t, "
                "pg_size_pretty(pg_total_relation_size('todo_attempts')) AS a, "
                "(SELECT count(*) FROM todo_attempts) AS attempts"
            )
        )
    return [[r["s"], r["n"]] for r in rows] + [
        ["(todos table + indexes)", size["t"]],
        ["(attempts rows, size)", f"{size['attempts']:,}, {size['a']}"],
    ]


def report(result: dict, users: dict) -> bool:
    times, group_by = result["times"], result["group_by"]
    gb = statistics.median(group_by)
    rows, ok = [], True
    for label in users:
        for page in result["pages"][label]:
            values = times[(label, page.name)]
            p95 = percentile(values, 95)
            met = p95 <= page.target_ms and (page.depth or gb / p95 >= 10)
            ok &= met
            rows.append(
                [
                    ("one team" if label == ME else "all 5 teams"),
                    page.name,
                    len(values),
                    f"{percentile(values, 50):.1f}",
                    f"{p95:.1f}",
                    f"{max(values):.1f}",
                    f"{gb / p95:.0f}x",
                    f"≤ {page.target_ms} ms" if page.depth else f"≤ {page.target_ms} ms and ≥ 10x",
                    "met" if met else "NOT met",
                ]
            )
    print_table(
        [
            "signed in as operator of",
            "page",
            "runs",
            "p50 ms",
            "p95 ms",
            "max ms",
            "GROUP BY median / p95",
            "target (p95)",
            "verdict",
        ],
        rows,
        title=f"Board at scale: server-side render (Django test Client, in-process); "
        f"plain '{GROUP_BY}': median {gb:,.0f} ms, p95 {percentile(group_by, 95):,.0f} ms ({len(group_by)} runs)",
    )
    count_rows = []
    for label in users:
        for name in COUNT_PAGES:
            if (label, name) not in times:
                continue  # left out by --only
            values = times[(label, name)]
            p95 = percentile(values, 95)
            count_rows.append(
                [
                    ("one team" if label == ME else "all 5 teams"),
                    name,
                    f"{percentile(values, 50):.1f}",
                    f"{p95:.1f}",
                    f"≤ {COUNT_TARGET_MS}",
                    "met" if p95 <= COUNT_TARGET_MS else "NOT met",
                ]
            )
    print_table(
        ["signed in as operator of", "page", "p50 ms", "p95 ms", "target p95 ms", "verdict"],
        count_rows,
        title="Counts at scale: the relay's exact counts",
    )
    print_table(
        ["human", "GROUP BY over their todos", "tabs and overview"], result["exact"], title="Counts against GROUP BY"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 5_000_000)
    parser.add_argument("--runs", type=int, default=25, help="timed renders per page (default 25)")
    parser.add_argument(
        "--data-dir", type=Path, default=DEFAULT_DIR, help=f"the kept data directory (default {DEFAULT_DIR})"
    )
    parser.add_argument("--reload", action="store_true", help="load the data again even if a load of --n rows is there")
    parser.add_argument("--only", default="", help="time only the pages whose name holds this text")
    parser.add_argument(
        "--load-only", action="store_true", help="load (if needed) and stop: time later, on a quieter machine"
    )
    args = parser.parse_args(argv)
    setup_django()
    from django.conf import settings

    settings.DEBUG = False
    print(f"load average before: {load_average()}", flush=True)
    if args.smoke:
        from bench.common import bench_server, store_database

        with bench_server() as admin, store_database(admin) as conninfo:
            result = run_scale_in(conninfo, 3_000, runs=2, reload=True)
        return 0
    conninfo = use_database(args.data_dir)
    with LoadSampler() as load_avg:
        result = run_scale_in(
            conninfo, args.n, runs=0 if args.load_only else args.runs, reload=args.reload, only=args.only
        )
    print(f"\nload average during the timing: {load_avg.summary()}")
    return 0 if result["ok"] else 1


def run_scale_in(
    conninfo: str,
    rows: int,
    *,
    runs: int,
    reload: bool = False,
    drop_indexes: bool = True,
    only: str = "",
    log=None,
) -> dict:
    """Load (unless ``rows`` are already there) and time; print the tables. The smoke test's entry."""
    from bench.common import connect

    log = log or (lambda line: print(line, flush=True))
    with connect(conninfo) as conn:
        tenancy = make_tenancy(conn)
        have = loaded_rows(conn)
        if reload or have != rows:
            log(f"loading {rows:,} todos (found {have or 0:,}) …")
            started = time.monotonic()
            load(conn, rows, tenancy, drop_indexes=drop_indexes, log=log)
            log(f"loaded in {time.monotonic() - started:.0f} s")
        else:
            log(f"reusing the loaded {rows:,} todos")
    print_table(["state", "todos"], distribution(conninfo), title="The data")
    if runs == 0:
        return {"ok": True}
    result = time_pages(conninfo, tenancy["users"], tenancy["teams"], runs, only=only, log=log)
    result["exact"] = counts_are_exact(conninfo, tenancy["users"])
    result["ok"] = report(result, tenancy["users"])
    return result


if __name__ == "__main__":
    sys.exit(main())

"""The CSV export at size: N todos streamed through the real view, rows/s and the process's peak RSS.

    uv run --group bench python -m bench.csv_export                  # 1,000,000 todos
    uv run --group bench python -m bench.csv_export --n 200000
    uv run --group bench python -m bench.csv_export --smoke          # 2,000 todos

A fresh database with Board's schema on the benchmarks' server (``bench.common``); one team, one
endpoint and one operator. The todos are loaded set-based (``INSERT … SELECT generate_series`` in
chunks of 250,000; not timed), in every state the export words differently, a tenth of them with
a failed attempt whose summary the export reads. Then ``/todos/export.csv`` is requested through
Django's ASGI handler (``AsyncClient``: middleware, session, the view) and its streamed body read
with ``async for``, as daphne reads it. What is printed: rows, bytes, seconds, rows/s, and the
resident set size before the export and at its peak (``/proc/self/statm`` sampled every 20 ms):
a flat export holds one keyset page (5,000 rows) whatever N is.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from dataclasses import dataclass

from bench.common import base_parser, bench_server, print_table, setup_django, store_database

CHUNK = 250_000
SAMPLE_SECONDS = 0.02

LOAD_SQL = """
INSERT INTO todos (id, endpoint_id, queue, kind, title, state, priority, attempt, max_attempts,
                   attempts_total, next_retry_at, result, created_at, updated_at, completed_at)
SELECT 'td_' || md5(%(seed)s || i::text), %(ep)s, 'bench', 'kind-' || (i %% 7),
       CASE WHEN i %% 97 = 0 THEN '=formula ' || i ELSE 'export, "bench" ' || i END,
       s.state, (i %% 21) - 10, s.attempt, 5, s.attempt, NULL,
       CASE WHEN s.state = 'failed' THEN jsonb_build_object('error', 'boom ' || i) END,
       now() - make_interval(secs => %(total)s::int - i), now(),
       CASE WHEN s.state IN ('done', 'failed', 'canceled') THEN now() END
FROM generate_series(%(first)s::int, %(last)s::int) AS i
CROSS JOIN LATERAL (SELECT CASE WHEN i %% 10 = 0 THEN 'failed' WHEN i %% 10 = 1 THEN 'canceled'
                                WHEN i %% 10 < 5 THEN 'pending' ELSE 'done' END AS state,
                           CASE WHEN i %% 10 = 0 THEN 1 ELSE 0 END AS attempt) s"""

ATTEMPTS_SQL = """
INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, claimer_endpoint_id, owner, claimed_at,
                           lease_expires_at, ended_at, outcome, disposition, summary)
SELECT t.id, 1, 1, 'endpoint', t.endpoint_id, 'endpoint:' || t.endpoint_id, t.created_at,
       t.created_at + interval '5 minutes', t.completed_at, 'failed', 'dead_lettered',
       'timeout after ' || (length(t.id) + ascii(right(t.id, 1))) || 's talking to the upstream'
FROM todos t WHERE t.state = 'failed' AND t.endpoint_id = %(ep)s"""


@dataclass
class ExportRun:
    rows: int
    bytes: int
    seconds: float
    rss_before: int
    rss_peak: int

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


class RssSampler:
    """The process's resident set size, sampled on a thread (bytes)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.now())
            if self._stop.wait(SAMPLE_SECONDS):
                return

    def __enter__(self) -> RssSampler:
        self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def load(n: int):
    """A team with one endpoint holding ``n`` todos, and an operator of it (a Django user)."""
    setup_django()
    from django.contrib.auth.models import User

    from todos.core.db import execute, pooled_connection
    from todos.core.store import endpoints, teams
    from todos.core.store.endpoints import SCOPE_VERBS
    from todos.live.relay import rebuild_counts

    slug = f"export-{uuid.uuid4().hex[:8]}"
    team = execute(teams.create_team(slug=slug, name=slug))
    ep = execute(
        endpoints.vend(None, team_id=team.id, name=slug, slug=slug, verbs=list(SCOPE_VERBS), queues=["bench"])
    ).endpoint
    user = User.objects.create_user(username=slug, password=None)
    execute(teams.set_member(None, team_id=team.id, user_id=user.pk, role="operator"))
    with pooled_connection() as conn:
        for first in range(1, n + 1, CHUNK):
            last = min(n, first + CHUNK - 1)
            conn.execute(LOAD_SQL, {"seed": slug, "ep": ep.id, "first": first, "last": last, "total": n})
        conn.execute(ATTEMPTS_SQL, {"ep": ep.id})
        rebuild_counts(conn)  # the relay's counts of rows written behind the store's back
        conn.execute("ANALYZE todos")
        conn.execute("ANALYZE todo_attempts")
    return user


def export_through_view(user) -> ExportRun:
    """``/todos/export.csv`` through the ASGI handler, read chunk by chunk and counted."""
    from asgiref.sync import sync_to_async
    from django.db import connections
    from django.test import AsyncClient, Client

    from todos.core import db

    signed_in = Client()
    signed_in.force_login(user)

    async def scenario() -> ExportRun:
        client = AsyncClient()
        client.cookies = signed_in.cookies
        try:
            rows = size = 0
            with RssSampler() as rss:
                before = rss.peak
                started = time.perf_counter()
                response = await client.get("/todos/export.csv")
                if response.status_code != 200 or not response.is_async:
                    raise SystemExit(f"the export answered {response.status_code}")
                async for chunk in response.streaming_content:
                    size += len(chunk)
                    rows += chunk.count(b"\r\n")
                seconds = time.perf_counter() - started
            return ExportRun(rows - 1, size, seconds, before, rss.peak)  # less the header's line
        finally:
            await db.aclose_pool()
            await sync_to_async(connections.close_all)()

    return asyncio.run(scenario())


def run_export(n: int) -> ExportRun:
    """Load ``n`` todos into the current database and export them (the smoke test's entry)."""
    return export_through_view(load(n))


def report(n: int, run: ExportRun) -> None:
    mb = 1024 * 1024
    print_table(
        ["todos", "rows", "MB", "seconds", "rows/s", "RSS before (MB)", "RSS peak (MB)", "growth (MB)"],
        [
            [
                n,
                run.rows,
                run.bytes / mb,
                run.seconds,
                run.rows_per_second,
                run.rss_before / mb,
                run.rss_peak / mb,
                (run.rss_peak - run.rss_before) / mb,
            ]
        ],
        title="CSV export through /todos/export.csv (ASGI handler, async iterator, keyset pages of 5,000)",
    )


def main() -> None:
    parser = base_parser(__doc__ or "", 1_000_000)
    args = parser.parse_args()
    n = 2_000 if args.smoke else args.n
    with bench_server() as admin, store_database(admin):
        started = time.perf_counter()
        user = load(n)
        print(f"loaded {n:,} todos in {time.perf_counter() - started:.1f} s")
        run = export_through_view(user)
    report(n, run)
    if run.rows != n:
        raise SystemExit(f"exported {run.rows:,} rows of {n:,}")


if __name__ == "__main__":
    main()

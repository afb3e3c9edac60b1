"""Charts at scale: p95 per chart's data query from the rollup, 5M todos' worth of history.

A chart reads the relay's rollup (``todo_flow``, migration 0012), never ``todos``: its size is
minutes × queues (a day of minutes, eight days of hours, per queue and per team), whatever the
number of todos. So the history of 5,000,000 finished todos is seeded straight into the rollup
(set-based, seconds), as the relay would have left it after a week with every queue busy every
minute — the rollup's worst case — and each chart's data is timed through the selector the
Board uses (``todos.core.selectors.flow.flow``: the query plus the percentiles from the histograms),
for one queue and for all queues of a human in every team, over 1 h, 24 h and 7 d.

Then the relay's side: passes of 500 change-log rows (claims and completions, each with a
timing) through ``relay_pass``, whose one statement now also upserts the rollup.

    uv run python -m bench.charts                      # 5 teams × 20 queues, 5M todos' history
    uv run python -m bench.charts --smoke              # tiny, seconds
"""

from __future__ import annotations

import sys
import time
from uuid import UUID

from bench.common import base_parser, bench_server, connect, one_row, print_table, setup_django, store_database
from bench.serving import percentile

SEED_SQL = """
WITH q AS (
    SELECT t.id AS team_id, 'queue-' || n AS queue
    FROM teams t CROSS JOIN generate_series(1, %(queues)s) n
    WHERE t.slug LIKE 'charts-%%'
), slot AS (
    SELECT 'minute' AS grain, m AS at FROM generate_series(
        date_trunc('minute', now()) - interval '1439 minutes', date_trunc('minute', now()), interval '1 minute') m
    UNION ALL
    SELECT 'hour', h FROM generate_series(
        date_trunc('hour', now()) - interval '191 hours', date_trunc('hour', now()), interval '1 hour') h
), hist AS (  -- a few fixed shapes, so seeding costs no per-row random arrays
    SELECT k, (SELECT array_agg(CASE WHEN b BETWEEN 10 + k AND 20 + k THEN %(per)s / 11 ELSE 0 END ORDER BY b)
               FROM generate_series(1, 50) b) AS h
    FROM generate_series(0, 7) k
)
INSERT INTO todo_flow (team_id, grain, queue, at, completed, failed, died, waited, ran)
SELECT q.team_id, s.grain, q.queue, s.at,
       CASE s.grain WHEN 'minute' THEN %(per)s ELSE %(per_hour)s END, 1, 0,
       (SELECT h FROM hist WHERE k = (hashtext(q.queue) & 7)), (SELECT h FROM hist WHERE k = (hashtext(q.queue) >> 3 & 7))
FROM q CROSS JOIN slot s"""

# The every-queue rows (queue ''), as the relay writes them beside each queue's.
SEED_ALL_SQL = """
WITH per_bucket AS (
    SELECT team_id, grain, at, i, sum(w)::integer AS w, sum(r)::integer AS r
    FROM todo_flow, unnest(waited, ran) WITH ORDINALITY u(w, r, i)
    GROUP BY 1, 2, 3, 4
), hist AS (
    SELECT team_id, grain, at, array_agg(w ORDER BY i) AS waited, array_agg(r ORDER BY i) AS ran
    FROM per_bucket GROUP BY 1, 2, 3
), counts AS (
    SELECT team_id, grain, at, sum(completed)::integer AS c, sum(failed)::integer AS f, sum(died)::integer AS d
    FROM todo_flow GROUP BY 1, 2, 3
)
INSERT INTO todo_flow (team_id, grain, queue, at, completed, failed, died, waited, ran)
SELECT team_id, grain, '', at, c, f, d, waited, ran FROM counts JOIN hist USING (team_id, grain, at)"""


def seed(conninfo: str, *, teams: int, queues: int, todos: int, log) -> list:
    """Teams ``charts-1..teams`` with ``queues`` queues each, and a week of rollup summing to
    about ``todos`` finished todos. Returns the TeamAccess of each team."""
    setup_django()
    from todos.core.db import execute
    from todos.core.selectors.access import TeamAccess
    from todos.core.store import teams as team_store

    created = [execute(team_store.create_team(slug=f"charts-{i}", name=f"Charts {i}")) for i in range(1, teams + 1)]
    # completed per queue-hour so that 8 days of hours hold ``todos`` in all (and a sixtieth of
    # that per queue-minute)
    per_hour = max(60, todos // (teams * queues * 192))
    per = per_hour // 60
    started = time.monotonic()
    with connect(conninfo) as conn:
        conn.execute(SEED_SQL, {"queues": queues, "per": per, "per_hour": per_hour})
        conn.execute(SEED_ALL_SQL)
        conn.execute("VACUUM ANALYZE todo_flow")
        size = one_row(
            conn.execute(
                """SELECT count(*) AS n, pg_total_relation_size('todo_flow') AS bytes,
                      (SELECT sum(completed) FROM todo_flow WHERE grain = 'hour' AND queue = '') AS finished
               FROM todo_flow"""
            )
        )
    log(
        f"rollup: {size['n']:,} rows, {size['bytes'] / 2**20:,.1f} MiB, {int(size['finished']):,} todos finished "
        f"in its eight days; seeded in {time.monotonic() - started:.1f} s"
    )
    return [TeamAccess(UUID(str(t.id)), t.slug, t.name, "operator") for t in created]


def time_charts(teams: list, *, runs: int) -> list[list]:
    """p50/p95 of each chart's data (the selector, one connection from the pool, warm)."""
    from todos.core.db import pool
    from todos.core.selectors.access import Viewer
    from todos.core.selectors.flow import FLOW_SQL, RANGES, flow, flow_params

    viewer = Viewer(user_id=0, username="bench", is_superuser=False, teams=tuple(teams), endpoints=())
    rows = []
    for range_key in RANGES:
        for label, queue in (("one queue", "queue-1"), (f"all queues of {len(teams)} teams", "")):
            data = flow(viewer, range_key=range_key, queue=queue)  # warm the pool and the plan
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                data = flow(viewer, range_key=range_key, queue=queue)
                times.append((time.perf_counter() - started) * 1000)
            with pool().connection() as conn:  # the server's own time for the statement
                plans = [
                    one_row(
                        conn.execute(
                            "EXPLAIN (ANALYZE, FORMAT JSON) " + FLOW_SQL,
                            flow_params(viewer, range_key=range_key, queue=queue),
                        )
                    )
                    for _ in range(5)
                ]
            server = sorted(list(p.values())[0][0]["Execution Time"] for p in plans)[2]
            planning = sorted(list(p.values())[0][0]["Planning Time"] for p in plans)[2]
            rows.append(
                [
                    range_key,
                    label,
                    len(data.intervals),
                    f"{data.total.completed:,}",
                    f"{planning:.2f}",
                    f"{server:.2f}",
                    f"{percentile(times, 50):.2f}",
                    f"{percentile(times, 95):.2f}",
                    f"{max(times):.2f}",
                ]
            )
    return rows


def time_relay(conninfo: str, *, todos: int, log) -> list[list]:
    """The relay's passes over the log of ``todos`` claims and completions (batches of 500)."""
    from bench.common import create_todos, make_agent
    from todos.core.db import execute
    from todos.core.store import agent as A
    from todos.live.relay import relay_pass

    with connect(conninfo) as conn:
        scope = make_agent(conn, queue="relayed")
        create_todos(conn, scope, todos, queue="relayed")
    with connect(conninfo) as relay_conn:
        while relay_pass(relay_conn).taken:  # the creations: not what is timed
            pass
        for _ in range(todos):
            claim = execute(A.claim_next(scope))
            assert claim is not None
            execute(A.complete(scope, claim.todo.id))
        times, taken = [], 0
        while True:
            started = time.perf_counter()
            done = relay_pass(relay_conn, batch=500)
            if not done.taken:
                break
            times.append((time.perf_counter() - started) * 1000)
            taken += done.taken
        flowed = one_row(
            relay_conn.execute("SELECT sum(completed) AS n FROM todo_flow WHERE queue = 'relayed' AND grain = 'minute'")
        )["n"]
    log(f"relay: {taken:,} log rows in {len(times)} passes; the rollup counts {flowed:,} completions")
    assert flowed == todos, "the relay's rollup lost or doubled a completion"
    return [
        [
            f"{len(times)}",
            f"{percentile(times, 50):.1f}",
            f"{percentile(times, 95):.1f}",
            f"{taken / sum(times) * 1000:,.0f}",
        ]
    ]


def run_in(conninfo: str, *, teams: int, queues: int, todos: int, runs: int, relay_todos: int, log=print) -> dict:
    """Seed, time, print. The smoke test's entry (against the test database)."""
    access = seed(conninfo, teams=teams, queues=queues, todos=todos, log=log)
    charts = time_charts(access, runs=runs)
    print_table(
        ["range", "chart", "intervals", "completed", "plan ms", "execute ms", "p50 ms", "p95 ms", "max ms"],
        charts,
        title=f"Chart data from the rollup ({runs} runs each; plan and execute: the server's, median of 5)",
    )
    relay = time_relay(conninfo, todos=relay_todos, log=log)
    print_table(["passes", "p50 ms", "p95 ms", "log rows/s"], relay, title="Relay passes of 500 rows, rollup included")
    return {"charts": charts, "relay": relay}


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 5_000_000)
    parser.add_argument("--runs", type=int, default=200, help="timed reads per chart (default 200)")
    parser.add_argument("--teams", type=int, default=5)
    parser.add_argument("--queues", type=int, default=20, help="queues per team (default 20)")
    args = parser.parse_args(argv)
    setup_django()
    from bench.serving import load_average

    print(f"load average before: {load_average()}", flush=True)
    if args.smoke:
        args.n, args.runs, args.teams, args.queues = 20_000, 5, 2, 3
    with bench_server() as admin, store_database(admin) as conninfo:
        out = run_in(
            conninfo,
            teams=args.teams,
            queues=args.queues,
            todos=args.n,
            runs=args.runs,
            relay_todos=200 if args.smoke else 5000,
        )
    worst = max(float(row[7]) for row in out["charts"])
    print(f"\nworst p95 per chart's data: {worst:.2f} ms (budget 50 ms); load average after: {load_average()}")
    return 0 if worst <= 50 else 1


if __name__ == "__main__":
    sys.exit(main())

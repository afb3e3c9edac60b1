"""The HTTP drain (bench.http_drain) through PgBouncer beside direct.

    uv run --group bench python -m bench.pgbouncer_drain                 # N=4,000, K=8, 3 rounds
    uv run --group bench python -m bench.pgbouncer_drain --smoke

One database, three Board servers (daphne, as ``bench.http_drain`` starts them), drained in turn,
the order alternating between rounds:

* ``direct``: ``DATABASE_URL`` on PostgreSQL, as Board runs without a pooler (the pools prepare a
  statement after its fifth run on a connection);
* ``direct, unprepared``: the same with ``BOARD_DB_PREPARED_STATEMENTS=0``, to tell the cost of
  preparing nothing from the cost of the extra hop;
* ``pgbouncer``: ``DATABASE_URL`` on Debian's PgBouncer in transaction mode
  (``--pool-size`` server connections) and ``BOARD_LISTEN_URL`` on PostgreSQL, as README "Growing
  past one database" deploys it (prepared statements off, the default there).

Each drain is ``bench.http_drain.drain_http_in``: N todos pre-created (not timed), K worker
processes each with a keep-alive HTTP connection, claim_next → complete until empty, the time from
the release to the last ``completed_at``, verified in SQL afterwards. Printed: each round, the
medians, and the ratio of each to ``direct`` (the target is ≥ 0.9× for PgBouncer).

PgBouncer is started by ``tests/support/pgbouncer.py``, the tests' own starter.
"""

from __future__ import annotations

import statistics

from bench.common import base_parser, bench_server, connect, print_table, setup_django, store_database
from bench.http_drain import QUEUE, K, Run, drain_http_in
from bench.serving import LoadSampler, clear_todos, database_url, load_average, start_board, vend_agent

DEFAULT_POOL_SIZE = 20
DIRECT = "direct"


def main(argv: list[str] | None = None) -> int:
    import logging

    from psycopg.conninfo import conninfo_to_dict

    from tests.support.pgbouncer import missing_reason, start_pgbouncer

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 4_000)
    parser.add_argument("--k", type=int, default=K, help="workers (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating the order (default 3)")
    parser.add_argument(
        "--pool-size",
        type=int,
        default=DEFAULT_POOL_SIZE,
        help=f"PgBouncer's default_pool_size (default {DEFAULT_POOL_SIZE})",
    )
    args = parser.parse_args(argv)
    reason = missing_reason()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    n = 200 if args.smoke else args.n
    rounds = 1 if args.smoke else args.rounds
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, list[Run]] = {}
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler():
        with connect(conninfo) as conn:
            scope, token, _ = vend_agent(conn, (QUEUE,))
        dbname = conninfo_to_dict(conninfo)["dbname"]
        bouncer = start_pgbouncer(conninfo, pool_size=args.pool_size)
        servers = {}
        try:
            servers[DIRECT] = start_board(conninfo, label=DIRECT)
            servers["direct, unprepared"] = start_board(
                conninfo, label="direct, unprepared", BOARD_DB_PREPARED_STATEMENTS="0"
            )
            servers["pgbouncer"] = start_board(
                conninfo,
                label="pgbouncer",
                DATABASE_URL=bouncer.url(str(dbname)),
                BOARD_LISTEN_URL=database_url(conninfo),
            )
            for server in servers.values():  # untimed: the first requests fill the server's pools
                drain_http_in(conninfo, server, scope, token, 16 * args.k, args.k, label="warm-up")
                clear_todos(conninfo)
            names = list(servers)
            for r in range(rounds):
                for name in names if r % 2 == 0 else list(reversed(names)):
                    run = drain_http_in(conninfo, servers[name], scope, token, n, args.k, label=name)
                    clear_todos(conninfo)
                    results.setdefault(name, []).append(run)
                    print(
                        f"round {r + 1}: {name:<20} {run.rate:>7,.0f} jobs/s ({run.seconds:.2f} s); "
                        f"load {load_average()}",
                        flush=True,
                    )
        finally:
            for server in servers.values():
                server.stop()
            bouncer.stop()

    rate = {name: statistics.median(r.rate for r in runs) for name, runs in results.items()}
    rows = [
        [
            name,
            n,
            len(runs),
            rate[name],
            " ".join(f"{r.rate:,.0f}" for r in runs),
            f"{rate[name] / rate[DIRECT]:.2f}×",
            f"{statistics.median(r.board_cpu or 0 for r in runs) / n * 1000:.2f}",
            f"{statistics.median(r.db_cpu or 0 for r in runs) / n * 1000:.2f}",
        ]
        for name, runs in results.items()
    ]
    print_table(
        [
            "server",
            "N",
            "rounds",
            "jobs/s (median)",
            "jobs/s per round",
            "vs direct",
            "Board CPU ms/job",
            "PostgreSQL CPU ms/job",
        ],
        rows,
        title=f"HTTP drain through PgBouncer (transaction mode, pool {args.pool_size}) beside direct: "
        f"N={n:,}, K={args.k}",
    )
    ratio = rate["pgbouncer"] / rate[DIRECT]
    print(f"pgbouncer / direct = {ratio:.2f}× (target ≥ 0.90×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

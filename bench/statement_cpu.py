"""The server CPU one claim and one complete cost, per store variant (a profile, not a target).

    uv run --group bench python -m bench.statement_cpu --variants none,no-claimer-fk
    uv run --group bench python -m bench.statement_cpu --smoke

One connection, no concurrency: N todos loaded, 20 claims to warm the statement cache, then M
claims and M completes. The figure is the **backend process's own CPU time** (from ``/proc``,
so planning, execution, triggers and commit are in, waiting is not), divided by M; and
``pg_prepared_statements`` says whether PostgreSQL re-planned the statement on each call
(``custom_plans``) or reused one plan (``generic_plans``). Requires the embedded server (or a
server on this machine).
"""

from __future__ import annotations

import sys
import time

from bench import systems, variants
from bench.common import base_parser, bench_server, connect, print_table, setup_django, store_database


def backend_cpu(conn) -> float:
    import psutil

    pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def measure_in(conninfo: str, n: int, m: int, variant: str | None) -> dict:
    setup_django()
    from todos.core.db import execute
    from todos.core.store import agent

    scope = systems.load_store(conninfo, n, variant)
    with connect(conninfo) as conn:

        def claim_next() -> str:
            claim = execute(agent.claim_next(scope, queue=systems.QUEUE), conn)
            if claim is None:
                raise RuntimeError(f"the queue ran dry: {n} todos loaded for {m} claims and 20 warm-up ones")
            return claim.todo.id

        variants.prepare_session(variant, conn)
        ids = []
        for _ in range(20):
            ids.append(claim_next())
        c0, w0 = backend_cpu(conn), time.perf_counter()
        for _ in range(m):
            ids.append(claim_next())
        c1, w1 = backend_cpu(conn), time.perf_counter()
        for todo_id in ids[:m]:
            execute(agent.complete(scope, todo_id), conn)
        c2, w2 = backend_cpu(conn), time.perf_counter()
        plans = conn.execute("SELECT generic_plans, custom_plans, statement FROM pg_prepared_statements").fetchall()
    claim_plans = next((p for p in plans if "fresh AS" in p["statement"]), None)
    complete_plans = next((p for p in plans if "state = 'done'" in p["statement"]), None)
    return {
        "claim_cpu_ms": (c1 - c0) / m * 1000,
        "claim_wall_ms": (w1 - w0) / m * 1000,
        "complete_cpu_ms": (c2 - c1) / m * 1000,
        "complete_wall_ms": (w2 - w1) / m * 1000,
        "claim_plans": claim_plans and f"{claim_plans['generic_plans']} generic / {claim_plans['custom_plans']} custom",
        "complete_plans": complete_plans
        and f"{complete_plans['generic_plans']} generic / {complete_plans['custom_plans']} custom",
    }


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 3_000)
    parser.add_argument("--m", type=int, default=1000, help="claims and completes measured (default 1,000)")
    parser.add_argument("--variants", default="none", help="comma list; 'none' is the store as it is")
    args = parser.parse_args(argv)
    n, m = (100, 30) if args.smoke else (args.n, args.m)
    rows = []
    with bench_server() as admin:
        for name in args.variants.split(","):
            v = None if name == "none" else name
            with store_database(admin) as conninfo:
                out = measure_in(conninfo, n, m, v)
            rows.append(
                [
                    name,
                    f"{out['claim_cpu_ms']:.2f} ms",
                    out["claim_plans"],
                    f"{out['complete_cpu_ms']:.2f} ms",
                    out["complete_plans"],
                    f"{out['claim_wall_ms']:.2f} / {out['complete_wall_ms']:.2f} ms",
                ]
            )
            print(
                f"{name}: claim {out['claim_cpu_ms']:.2f} ms, complete {out['complete_cpu_ms']:.2f} ms of backend CPU",
                flush=True,
            )
    print_table(
        ["variant", "claim CPU", "claim plans", "complete CPU", "complete plans", "wall claim / complete"],
        rows,
        title=f"Backend CPU per statement, one connection (N={n:,}, M={m:,})",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

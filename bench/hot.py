"""HOT updates: how many of the updates to ``todos`` a heartbeat-heavy run keeps HOT.

    uv run --group bench python -m bench.hot
    uv run --group bench python -m bench.hot --heartbeats 8 --n 2000
    uv run --group bench python -m bench.hot --smoke

K workers each loop ``claim_next`` (fenced) → H × ``heartbeat`` → ``complete`` until the queue is
empty; the figure is ``n_tup_hot_upd / n_tup_upd`` for ``todos`` (and ``todo_attempts``) from
``pg_stat_user_tables``, taken as the difference around the run.

Why the ceiling is H / (H + 2): a claim and a complete change ``state`` (and ``completed_at``),
which the partial indexes' predicates and key columns read, so those two updates can never be
HOT; a heartbeat writes only ``lease_expires_at`` and ``updated_at``, which no index covers, so
it is HOT whenever the row's page has room (``fillfactor = 80`` leaves it). With H = 20 the
ceiling is 20/22 = 0.909; reaching 0.9 needs H ≥ 18 heartbeats per todo.
"""

from __future__ import annotations

import sys
import time

from bench import systems
from bench.common import base_parser, bench_server, connect, print_table, run_gang, setup_django, store_database

STATS = """
SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
WHERE relname IN ('todos', 'todo_attempts') ORDER BY relname"""


def hot_worker(index: int, barrier, conninfo: str, scope, heartbeats: int) -> dict:
    setup_django()
    from todos.core.db import execute
    from todos.core.store import agent

    done = beats = 0
    last = None
    with connect(conninfo) as conn:
        systems.start(barrier)
        while True:
            claim = execute(agent.claim_next(scope, queue=systems.QUEUE, require_fence=True), conn)
            if claim is None:
                break
            for _ in range(heartbeats):
                execute(agent.heartbeat(scope, claim.todo.id, lease_token=claim.lease_token), conn)
                beats += 1
            execute(agent.complete(scope, claim.todo.id, lease_token=claim.lease_token), conn)
            done += 1
            last = time.monotonic()
    return {"done": done, "last": last, "beats": beats}


def stats(conninfo: str) -> dict[str, tuple[int, int]]:
    """Per table (n_tup_upd, n_tup_hot_upd), after every backend has reported (a backend flushes
    its counters when it exits, so the workers' numbers are in once they have disconnected)."""
    with connect(conninfo) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return {r["relname"]: (r["n_tup_upd"], r["n_tup_hot_upd"]) for r in conn.execute(STATS).fetchall()}


def run_hot_in(
    conninfo: str, n: int, k: int, heartbeats: int, *, mode: str = "threads", variant: str | None = None
) -> dict:
    """Load ``n`` todos, run the heartbeat-heavy mix, verify, and return the HOT figures."""
    scope = systems.load_store(conninfo, n, variant)
    before = stats(conninfo)
    started = time.monotonic()
    gang = run_gang(hot_worker, k, (conninfo, scope, heartbeats), mode=mode)
    seconds = time.monotonic() - started
    time.sleep(0.5)  # let the exited backends' statistics land
    after = stats(conninfo)
    systems.verify_store(conninfo, n)
    out = {
        "n": n,
        "k": k,
        "heartbeats": heartbeats,
        "seconds": seconds,
        "beats": sum(x["beats"] for x in gang.extra if "beats" in x),
        "ceiling": heartbeats / (heartbeats + 2),
    }
    for table in ("todos", "todo_attempts"):
        upd = after[table][0] - before.get(table, (0, 0))[0]
        hot = after[table][1] - before.get(table, (0, 0))[1]
        out[table] = (upd, hot, hot / upd if upd else float("nan"))
    return out


def run_hot(admin: str, n: int, k: int, heartbeats: int, variant: str | None = None) -> dict:
    with store_database(admin) as conninfo:
        return run_hot_in(conninfo, n, k, heartbeats, variant=variant)


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 2_000)
    parser.add_argument("--k", type=int, default=8, help="concurrent workers (default 8)")
    parser.add_argument(
        "--heartbeats",
        type=str,
        default="8,20,24",
        help="heartbeats per todo; a comma list runs each (default 8,20,24)",
    )
    parser.add_argument("--variant", default=None, help="a bench/variants.py schema variant (e.g. fillfactor-70)")
    args = parser.parse_args(argv)
    n = 40 if args.smoke else args.n
    counts = [int(h) for h in args.heartbeats.split(",")]
    rows = []
    with bench_server() as admin:
        for h in counts:
            out = run_hot(admin, n, args.k, h, args.variant)
            t, a = out["todos"], out["todo_attempts"]
            beats_hot = t[1] / out["beats"] if out["beats"] else float("nan")
            rows.append(
                [
                    n,
                    args.k,
                    h,
                    f"{t[1]:,} / {t[0]:,}",
                    f"{t[2]:.3f}",
                    f"{out['ceiling']:.3f}",
                    f"{beats_hot:.3f}",
                    f"{a[1]:,} / {a[0]:,}",
                    f"{a[2]:.3f}",
                    "met" if t[2] >= 0.9 else ("NOT met" if out["ceiling"] >= 0.9 else "below 0.9 by construction"),
                ]
            )
            print(
                f"heartbeats={h}: todos HOT {t[2]:.3f} (ceiling {out['ceiling']:.3f}), "
                f"todo_attempts HOT {a[2]:.3f}; {out['seconds']:.1f} s",
                flush=True,
            )
    print_table(
        [
            "N",
            "K",
            "heartbeats/todo",
            "todos HOT/upd",
            "todos ratio",
            "ceiling H/(H+2)",
            "heartbeats HOT",
            "attempts HOT/upd",
            "attempts ratio",
            "target >= 0.9",
        ],
        rows,
        title="HOT updates (pg_stat_user_tables, difference around the run"
        + (f"; variant {args.variant})" if args.variant else ")"),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

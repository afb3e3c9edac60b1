"""Periodic schedules: 1,000 schedules firing every minute, swept by several loops at once;
every tick fired exactly once, and how late.

    uv run --group bench python -m bench.schedules                 # real time: 2 minute boundaries
    uv run --group bench python -m bench.schedules --minutes 3 --sweepers 4
    uv run --group bench python -m bench.schedules --smoke         # compressed: seconds, for CI

Real time (the default). ``--n`` schedules (default 1,000) with ``* * * * *`` are created through
the store (``store.schedules.create``), then ``--sweepers`` threads (default 3; each its own pooled
connection, as the loops of three Board processes would be) run the schedules loop exactly as
``todos/ops/loops.py`` does — ``run_sweep_once`` then ``schedules.INTERVAL_SECONDS`` of sleep — for
``--minutes`` wall-clock minute boundaries. Nothing is seeded: each tick is reached by the clock.

Compressed (``--smoke`` or ``--compressed``): every schedule's ``next_fire_at`` is seeded to the
current minute (already in the past), so all of them are due at once when the sweepers start; it
measures one burst of N due ticks without waiting for the clock. Lateness then counts from the
sweepers' start, not from the tick (the tick is up to a minute old by construction).

Checks, from ``schedule_fires`` and ``todos``: every (schedule, minute tick) in the window fired
exactly once (the primary key makes a second fire impossible, so the check is that none is
*missing* and that the todos match the fires one to one, each idempotency key once). Lateness is
``fired_at − tick`` (``fired_at`` is the server's clock at the INSERT, inside the transaction that
commits the todo); p50, p95 and max are printed. The target is p95 ≤ 1 s.
"""

from __future__ import annotations

import statistics
import threading
import time
from datetime import UTC, datetime, timedelta

from bench import systems
from bench.common import base_parser, bench_server, check, one_row, print_table, store_database


def sweeper(stop: threading.Event, errors: list) -> None:
    from todos.ops import loops

    [sweep] = [s for s in loops.SWEEPS if s.name == "schedules"]
    while not stop.is_set():
        try:
            loops.run_sweep_once(sweep)
        except Exception as exc:  # noqa: BLE001 - reported by the run
            errors.append(repr(exc))
        stop.wait(sweep.interval())


def run(admin: str, n: int, sweepers: int, minutes: int, compressed: bool) -> dict:
    with store_database(admin) as conninfo:
        return measure(conninfo, n, sweepers, minutes, compressed)


def measure(conninfo: str, n: int, sweepers: int, minutes: int, compressed: bool) -> dict:
    """The run on a database with Board's schema (the store's pool must point at it too)."""
    systems.setup_django()
    from todos.core.db import execute
    from todos.core.store import schedules

    with systems.connect(conninfo) as conn:
        scope = systems.make_agent(conn, systems.QUEUE)
        now = datetime.now(UTC)
        for i in range(n):
            execute(
                schedules.create(
                    None,
                    scope.team_id,
                    now=now,
                    name=f"every-minute-{i:04d}",
                    cron="* * * * *",
                    timezone="UTC",
                    endpoint_id=scope.endpoint_id,
                    queue=systems.QUEUE,
                    title=f"tick of schedule {i}",
                ),
                conn,
            )
        if compressed:
            conn.execute("UPDATE schedules SET next_fire_at = date_trunc('minute', now())")
        conn.execute("VACUUM ANALYZE schedules")
        stop, errors = threading.Event(), []
        started = one_row(conn.execute("SELECT clock_timestamp() AS t"))["t"]
        threads = [threading.Thread(target=sweeper, args=(stop, errors)) for _ in range(sweepers)]
        for t in threads:
            t.start()
        if compressed:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if one_row(conn.execute("SELECT count(*) AS n FROM schedule_fires"))["n"] >= n:
                    break
                time.sleep(0.05)
            window = one_row(conn.execute("SELECT min(tick) AS a, max(tick) AS b FROM schedule_fires"))
        else:
            # wait for `minutes` minute boundaries, then a few seconds for their fires
            first = one_row(conn.execute("SELECT date_trunc('minute', now()) + interval '1 minute' AS t"))["t"]
            last = first + timedelta(minutes=minutes - 1)
            while one_row(conn.execute("SELECT clock_timestamp() AS t"))["t"] < last:
                time.sleep(0.5)
            time.sleep(5)
            window = {"a": first, "b": last}
        stop.set()
        for t in threads:
            t.join()
        check(not errors, f"a sweep failed: {errors[:3]}")
        fires = conn.execute(
            """SELECT f.schedule_id, f.tick, f.how, f.todo_id,
                      extract(epoch FROM f.fired_at - greatest(f.tick, %(started)s)) AS late
               FROM schedule_fires f WHERE f.tick BETWEEN %(a)s AND %(b)s""",
            {"started": started if compressed else datetime(1970, 1, 1, tzinfo=UTC), **window},
        ).fetchall()
        ticks = one_row(
            conn.execute(
                "SELECT count(DISTINCT tick) AS n FROM schedule_fires WHERE tick BETWEEN %(a)s AND %(b)s", window
            )
        )["n"]
        expected = n * (1 if compressed else minutes)
        check(len(fires) == expected, f"{len(fires)} fires for {expected} ticks")
        check(len({(f["schedule_id"], f["tick"]) for f in fires}) == len(fires), "a tick fired twice")
        check(all(f["how"] == "tick" for f in fires), "a tick fired as something else")
        todos = one_row(
            conn.execute(
                """SELECT count(*) AS n, count(DISTINCT idempotency_key) AS keys FROM todos
               WHERE id = ANY(%(ids)s)""",
                {"ids": [f["todo_id"] for f in fires]},
            )
        )
        check(todos["n"] == len(fires) == todos["keys"], f"todos {todos} for {len(fires)} fires")
        late = sorted(float(f["late"]) for f in fires)
        return {
            "fires": len(fires),
            "ticks": ticks,
            "p50": statistics.median(late),
            "p95": late[int(0.95 * (len(late) - 1))],
            "max": late[-1],
        }


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 1_000)
    parser.add_argument("--sweepers", type=int, default=3, help="concurrent loops (threads), default 3")
    parser.add_argument("--minutes", type=int, default=2, help="minute boundaries to wait for (real time)")
    parser.add_argument("--compressed", action="store_true", help="seed every schedule due now (one burst)")
    args = parser.parse_args(argv)
    compressed = args.compressed or args.smoke
    n = 50 if args.smoke else args.n
    with bench_server() as admin:
        out = run(admin, n, args.sweepers, args.minutes, compressed)
    mode = "compressed (seeded due)" if compressed else f"real time, {args.minutes} minute boundaries"
    print_table(
        ["mode", "schedules", "sweepers", "ticks fired", "fired twice", "lateness p50 s", "p95 s", "max s"],
        [[mode, n, args.sweepers, out["fires"], 0, out["p50"], out["p95"], out["max"]]],
        title="Schedules: every tick once, and how late",
    )
    return 0 if out["p95"] <= 1.0 else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())

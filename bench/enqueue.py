"""Enqueue over HTTP through the Python client: ``create_batch`` of 100 beside ``create_for`` one by one.

    uv run --group bench python -m bench.enqueue                 # N=3,000 per run, 2 rounds
    uv run --group bench python -m bench.enqueue --smoke

One Board server (daphne in a subprocess) on a fresh database; a producer process with one
``board_client.Client`` (keep-alive) sends N todos to one queue, each with a payload and an
idempotency key, either one ``create_for`` per todo or ``create_batch`` calls of ``--batch`` items.
The time is the producer's wall clock from its first request to its last answer; afterwards the
database must hold exactly N todos (the table is emptied between runs). Systems alternate order
between rounds; the ratio is of the medians, in one run.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench import systems
from bench.common import (
    base_parser,
    bench_server,
    check,
    connect,
    one_row,
    print_table,
    run_gang,
    setup_django,
    store_database,
)
from bench.serving import LoadSampler, clear_todos, load_average, start_board, vend_agent

QUEUE = "bench"
SYSTEMS = ("create_for", "create_batch")


def producer(index: int, barrier, url: str, token: str, n: int, batch: int, run: str) -> dict:
    """Send ``n`` todos, one per request (``batch`` 1) or ``batch`` per request; CPU and time."""
    from board_client import Client
    from board_client.types import NewTodo

    client = Client(url, token, retries=0, timeout=120)
    client.get_default_lease()  # opens the connection
    systems.start(barrier)
    cpu0, t0 = time.process_time(), time.perf_counter()
    items: list[NewTodo] = [
        {"queue": QUEUE, "title": f"todo {i}", "payload": {"i": i, "run": run}, "idempotency_key": f"{run}-{i}"}
        for i in range(n)
    ]
    if batch == 1:
        for item in items:
            client.create_for(
                item["queue"], item["title"], payload=item.get("payload"), idempotency_key=item.get("idempotency_key")
            )
    else:
        for start in range(0, n, batch):
            client.create_batch(items[start : start + batch])
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    client.close()
    return {"done": n, "last": time.monotonic(), "cpu": cpu, "seconds": seconds}


def run_once(conninfo: str, server, token: str, system: str, n: int, batch: int, tag: str) -> dict:
    size = 1 if system == "create_for" else batch
    board0 = server.cpu_seconds()
    gang = run_gang(producer, 1, (server.url, token, n, size, tag), mode="processes")
    board1 = server.cpu_seconds()
    with connect(conninfo) as conn:
        count = one_row(conn.execute("SELECT count(*) AS n FROM todos"))["n"]
    check(count == n, f"{system}: the database holds {count} todos, expected {n}")
    out = gang.extra[0]
    return {"rate": n / out["seconds"], "client_cpu": out["cpu"], "board_cpu": board1 - board0}


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 3_000)
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the order (default 2)")
    parser.add_argument("--batch", type=int, default=100, help="items per create_batch (default 100)")
    args = parser.parse_args(argv)
    n = 300 if args.smoke else args.n
    check(n % args.batch == 0, f"N ({n}) must be a multiple of --batch ({args.batch})")
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, list[dict]] = {}
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler() as load:
        with connect(conninfo) as conn:
            _, token, _ = vend_agent(conn, (QUEUE,))
        server = start_board(conninfo)
        try:
            run_once(conninfo, server, token, "create_batch", args.batch, args.batch, "warm-a")  # untimed
            clear_todos(conninfo)
            run_once(conninfo, server, token, "create_for", 50, 1, "warm-b")
            clear_todos(conninfo)
            for r in range(args.rounds):
                for system in SYSTEMS if r % 2 == 0 else tuple(reversed(SYSTEMS)):
                    out = run_once(conninfo, server, token, system, n, args.batch, f"r{r}-{system}")
                    clear_todos(conninfo)
                    results.setdefault(system, []).append(out)
                    print(
                        f"round {r + 1}: {system:<13} {out['rate']:>8,.0f} todos/s; CPU ms/todo: producer "
                        f"{out['client_cpu'] / n * 1000:.3f}, Board {out['board_cpu'] / n * 1000:.3f}; "
                        f"load {load_average()}",
                        flush=True,
                    )
        finally:
            server.stop()
    rate = {s: statistics.median(o["rate"] for o in runs) for s, runs in results.items()}
    rows = [
        [
            s if s == "create_for" else f"create_batch of {args.batch}",
            n,
            len(runs),
            f"{rate[s]:,.0f}",
            " ".join(f"{o['rate']:,.0f}" for o in runs),
            f"{statistics.median(o['client_cpu'] for o in runs) / n * 1000:.3f}",
            f"{statistics.median(o['board_cpu'] for o in runs) / n * 1000:.3f}",
        ]
        for s, runs in results.items()
    ]
    print_table(
        ["enqueue", "N", "rounds", "todos/s (median)", "per round", "producer CPU ms/todo", "Board CPU ms/todo"],
        rows,
        title=f"Enqueue over HTTP through the Python client, one producer; load average {load.summary()}",
    )
    if len(rate) == 2:
        print_table(
            ["ratio (throughput, same run)", "measured"],
            [[f"create_batch of {args.batch} / create_for", f"{rate['create_batch'] / rate['create_for']:.1f}x"]],
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

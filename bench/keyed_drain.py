"""A drain where every todo carries a concurrency key: N todos over ``--keys`` keys (default 100,
limit 1 each), K = 8 workers, claim_next → complete; the jobs/s and proof the limit held.

    uv run --group bench python -m bench.keyed_drain --n 20000
    uv run --group bench python -m bench.keyed_drain --smoke

The keys go round-robin in creation order (todo i carries ``key-(i mod keys)``), the claim order.
The workers are threads: each adds a key it claimed to a shared tally (under a lock) and takes it
off *before* completing, so the tally is never above what the database holds; the highest value
any key reached is reported. A monitor samples the database every few milliseconds for keys with
more claimed todos than their limit. After the drain the slot counts are checked against the
todos (``tests.support.invariants.broken_slots``). Any excess fails the run. ``--unkeyed`` runs the same
drain with no keys, in the same process and server, for the ratio.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

from bench import systems
from bench.common import base_parser, bench_server, one_row, print_table, store_database

K = 8
KEYS = 100


def keyed_worker(index: int, barrier, conninfo: str, scope, tally: dict) -> dict:
    systems.setup_django()
    from todos.core.db import execute
    from todos.core.store import agent

    held, worst, guard = tally["held"], tally["worst"], tally["lock"]
    done, last = 0, None
    with systems.connect(conninfo) as conn:
        systems.start(barrier)
        cpu0 = time.thread_time()
        while True:
            claim = execute(agent.claim_next(scope, queue=systems.QUEUE), conn)
            if claim is None:
                # a key's last todos may be waiting for its slot: empty only when nothing is left
                left = one_row(conn.execute("SELECT count(*) AS n FROM todos WHERE state <> 'done'"))["n"]
                if left == 0:
                    break
                time.sleep(0.001)
                continue
            key = claim.todo.concurrency_key
            if key is not None:
                with guard:
                    held[key] += 1
                    worst[key] = max(worst[key], held[key])
                    held[key] -= 1  # before the slot is given back
            execute(agent.complete(scope, claim.todo.id), conn)
            done += 1
            last = time.monotonic()
    return {"done": done, "last": last, "cpu": time.thread_time() - cpu0}


def monitor(conninfo: str, stop: threading.Event, found: list, samples: list) -> None:
    with systems.connect(conninfo) as conn:
        while not stop.is_set():
            rows = conn.execute(
                """SELECT t.concurrency_key AS key, count(*) AS n, max(k.max_claimed) AS lim
                   FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
                   LEFT JOIN concurrency_keys k ON k.team_id = e.team_id AND k.key = t.concurrency_key
                   WHERE t.state = 'claimed' AND t.concurrency_key IS NOT NULL
                   GROUP BY 1 HAVING count(*) > coalesce(max(k.max_claimed), 1)"""
            ).fetchall()
            found.extend(rows)
            samples.append(1)
            time.sleep(0.005)


def run(admin: str, n: int, k: int, keys: int | None) -> dict:
    with store_database(admin) as conninfo:
        return drain_keyed_in(conninfo, n, k, keys)


def drain_keyed_in(conninfo: str, n: int, k: int, keys: int | None) -> dict:
    """Load, drain and verify in an existing database (the smoke test's); ``keys`` None: unkeyed."""
    scope = systems.load_store(conninfo, n)
    if keys:
        with systems.connect(conninfo) as conn:
            conn.execute(
                """UPDATE todos t SET concurrency_key = 'key-' || (o.n %% %(keys)s)
                   FROM (SELECT id, row_number() OVER (ORDER BY priority, created_at) AS n FROM todos) o
                   WHERE o.id = t.id""",
                {"keys": keys},
            )
            conn.execute("VACUUM ANALYZE todos")
    tally = {"held": Counter(), "worst": Counter(), "lock": threading.Lock()}
    stop, found, samples = threading.Event(), [], []
    watcher = threading.Thread(target=monitor, args=(conninfo, stop, found, samples))
    watcher.start()
    try:
        with systems.relaying(conninfo):
            seconds, gang = systems._timed_gang(
                conninfo, keyed_worker, k, (conninfo, scope, tally), "threads", "SELECT max(completed_at) FROM todos"
            )
            systems.wait_relayed(conninfo)
    finally:
        stop.set()
        watcher.join()
    systems.verify_store(conninfo, n)  # includes the slot invariant (claimed = 0 everywhere now)
    worst = tally["worst"]
    systems.check(not found, f"a key went over its limit: {found[:5]}")
    systems.check(all(v <= 1 for v in worst.values()), f"a worker saw a key twice at once: {worst.most_common(3)}")
    return {
        "rate": n / seconds,
        "seconds": seconds,
        "done": sum(gang.done),
        "keys_seen": len(worst),
        "worst": max(worst.values(), default=0),
        "samples": len(samples),
        "over": len(found),
    }


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 20_000)
    parser.add_argument("--k", type=int, default=K)
    parser.add_argument("--keys", type=int, default=KEYS)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--unkeyed", action="store_true", help="also drain with no keys, alternating, for the ratio")
    args = parser.parse_args(argv)
    n = 400 if args.smoke else args.n
    rows = []
    with bench_server() as admin:
        for r in range(args.rounds):
            order: list[int | None] = [args.keys, None] if args.unkeyed else [args.keys]
            if r % 2:
                order.reverse()
            for keys in order:
                out = run(admin, n, args.k, keys)
                label = f"{keys} keys, limit 1" if keys else "no keys"
                print(f"round {r + 1}: {label:<20} {out['rate']:>7,.0f} jobs/s", flush=True)
                rows.append(
                    [r + 1, label, n, args.k, out["rate"], out["keys_seen"], out["worst"], out["samples"], out["over"]]
                )
    print_table(
        [
            "round",
            "drain",
            "N",
            "K",
            "jobs/s",
            "keys claimed",
            "most held at once per key (workers)",
            "DB samples",
            "samples over limit",
        ],
        rows,
        title="Keyed drain (every todo keyed, limit 1 per key)",
    )
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())

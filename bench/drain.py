"""Drain throughput: N pre-created jobs, K = 8 workers, time to the N-th completion.

    uv run --group bench python -m bench.drain --n 50000
    uv run --group bench python -m bench.drain --smoke

Systems, each in its own fresh database on the same server, run one after another in a round;
with ``--rounds R`` the order alternates (forward, then reversed) so drift in the machine's load
hits every system alike, and the table shows the median of the rounds:

* ``store``: Board's store, row at a time: ``claim_next`` → ``complete`` per job, each worker on
  its own psycopg connection (attempt history and NOTIFY on, as in production);
* ``bare``: the floor: a two-statement ``FOR UPDATE SKIP LOCKED`` loop on a minimal table;
* ``pgqueuer``: PgQueuer's QueueManager, psycopg driver, ``batch_size=1``;
* ``procrastinate``: one procrastinate worker, ``concurrency=8``;
* ``store-batch``: ``claim_batch(max=10)`` → ``complete_batch``; ``pgqueuer-batch``: ``batch_size=10``.

Ratios are throughput ratios (jobs per second), so "store / bare ≥ 0.4" means the store drains at
least 40 % as fast as the bare loop.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench import systems
from bench.common import base_parser, bench_server, print_table

K = 8
ROW_SYSTEMS = ("store", "bare", "pgqueuer", "procrastinate")
BATCH_SYSTEMS = ("store-batch", "pgqueuer-batch")
TARGETS = [
    # (numerator, denominator, target ratio): the throughput the store is held to beside each system
    ("store", "bare", 0.4),
    ("store", "pgqueuer", 2.0),
    ("store", "procrastinate", 3.0),
    ("store-batch", "pgqueuer-batch", 1.2),
]


def run_one(name: str, admin: str, n: int, k: int, mode: str, pgq_layout: str):
    if name == "store":
        return systems.run_store(admin, n, k, mode=mode, label="store")
    if name.startswith("store+"):
        v = name.split("+", 1)[1]
        return systems.run_store(admin, n, k, mode=mode, variant=v, label=name)
    if name.startswith("store-batch+"):
        v = name.split("+", 1)[1]
        return systems.run_store(admin, n, k, mode=mode, batch=10, variant=v, label=name)
    if name == "bare":
        return systems.run_bare(admin, n, k, mode=mode)
    if name == "bare-notify":
        return systems.run_bare(admin, n, k, mode=mode, notify=True)
    if name == "store-batch":
        return systems.run_store(admin, n, k, mode=mode, batch=10, label="store-batch")
    if name == "pgqueuer":
        return systems.run_pgqueuer(admin, n, k, batch_size=1, layout=pgq_layout)
    if name == "pgqueuer-batch":
        return systems.run_pgqueuer(admin, n, k, batch_size=10, layout=pgq_layout)
    if name == "procrastinate":
        return systems.run_procrastinate(admin, n, k)
    raise SystemExit(f"unknown system {name!r}")


def _ms(cpu_seconds: float | None, n: int) -> str:
    return "n/a" if cpu_seconds is None else f"{cpu_seconds / n * 1000:.2f} ms"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _median_or_none(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def available(name: str) -> str | None:
    if name.startswith("pgqueuer"):
        return systems.pgqueuer_available()
    if name.startswith("procrastinate"):
        return systems.procrastinate_available()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 50_000)
    parser.add_argument("--k", type=int, default=K, help="concurrent workers (default 8)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, alternating the order (default 1)")
    parser.add_argument(
        "--systems",
        default=",".join(ROW_SYSTEMS + BATCH_SYSTEMS),
        help="comma-separated: store, bare, pgqueuer, procrastinate, store-batch, pgqueuer-batch, "
        "bare-notify, store+VARIANT, store-batch+VARIANT (VARIANT from bench/variants.py)",
    )
    parser.add_argument(
        "--mode",
        choices=("threads", "processes"),
        default="threads",
        help="how the store's and the bare loop's workers run (default threads)",
    )
    parser.add_argument(
        "--pgq-layout",
        choices=("processes", "asyncio"),
        default="processes",
        help="pgqueuer: K processes with one QueueManager each, or K QueueManagers in one event loop",
    )
    args = parser.parse_args(argv)
    n = 200 if args.smoke else args.n
    names = [s.strip() for s in args.systems.split(",") if s.strip()]

    results: dict[str, list] = {}
    labels: dict[str, str] = {}
    with bench_server() as admin:
        for r in range(args.rounds):
            order = names if r % 2 == 0 else list(reversed(names))
            for name in order:
                why = available(name)
                if why:
                    print(f"skip {name}: {why}", file=sys.stderr)
                    continue
                started = time.monotonic()
                out = run_one(name, admin, n, args.k, args.mode, args.pgq_layout)
                results.setdefault(name, []).append(out)
                labels[name] = out.system
                print(
                    f"round {r + 1}: {out.system:<36} {out.rate:>7,.0f} jobs/s  ({out.seconds:.2f} s server, "
                    f"{out.wall_seconds:.2f} s client, {out.wal_per_job:,.0f} WAL bytes/job, "
                    f"{out.wal_fpi / n:.2f} FPI/job, CPU/job server {_ms(out.server_cpu, n)} "
                    f"client {_ms(out.client_cpu, n)}, lock waits {_share(out.lock_wait_share)} {out.lock_waits_by_event or ''}; "
                    f"run {time.monotonic() - started:.0f} s incl. load)",
                    flush=True,
                )

    rate = {name: statistics.median(o.rate for o in outs) for name, outs in results.items()}
    rows = []
    for name, outs in results.items():
        rows.append(
            [
                labels[name],
                n,
                args.k,
                len(outs),
                statistics.median(o.seconds for o in outs),
                rate[name],
                " ".join(f"{o.rate:,.0f}" for o in outs),
                f"{statistics.median(o.wal_per_job for o in outs):,.0f}",
                _ms(_median_or_none([o.server_cpu for o in outs]), n),
                _ms(_median_or_none([o.client_cpu for o in outs]), n),
                _share(_median_or_none([o.lock_wait_share for o in outs])),
            ]
        )
    print_table(
        [
            "system",
            "N",
            "K",
            "rounds",
            "seconds (median)",
            "jobs/s (median)",
            "jobs/s per round",
            "WAL bytes/job",
            "server CPU/job",
            "client CPU/job",
            "lock-wait samples",
        ],
        rows,
        title=f"Drain: N={n:,}, K={args.k}, workers as {args.mode} (pgqueuer: {args.pgq_layout})",
    )

    ratio_rows = []
    extra = [(name, "bare", None) for name in rate if "+" in name and not name.startswith("store-batch")]
    extra += [(name, "pgqueuer-batch", None) for name in rate if name.startswith("store-batch+")]
    extra += [("bare-notify", "bare", None)]
    for a, b, target in TARGETS + extra:
        if a in rate and b in rate:
            # Per round: the two systems ran minutes apart, under the same outside load.
            per_round = [x.rate / y.rate for x, y in zip(results[a], results[b])]
            value = statistics.median(per_round)
            verdict = "—" if target is None else ("met" if value >= target else "NOT met")
            ratio_rows.append(
                [
                    f"{labels[a]} / {labels[b]}",
                    f"{value:.2f}x",
                    " ".join(f"{r:.2f}" for r in per_round),
                    "—" if target is None else f">= {target}x",
                    verdict,
                ]
            )
    if ratio_rows:
        print_table(["ratio (throughput)", "median of rounds", "per round", "target", "verdict"], ratio_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

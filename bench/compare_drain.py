"""The store's drain on this checkout (or ``--this``) against another checkout, alternating.

    uv run --group bench python -m bench.compare_drain --base /path/to/checkout-of-main --n 20000 --rounds 6
    uv run --group bench python -m bench.compare_drain --base <before> --this <after> --system store-batch

One PostgreSQL server for the whole run (``bench_server``); each round runs ``python -m
bench.drain --systems <system>`` twice from the base checkout and twice from this one, mirrored
(``round_order``), each in a fresh database migrated by its own code, after a CHECKPOINT. It
prints every drain's jobs/s, the per-round ratio (this / base, of the pairs' sums) and the median
and geometric mean of those ratios. The criterion: with no todo scheduled and none keyed,
this checkout drains within 5 % of the base (ratio ≥ 0.95).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import bench_server, print_table

HERE = Path(__file__).resolve().parent.parent


def round_order(r: int) -> list[str]:
    """Each round drains both checkouts twice, mirrored (base this this base, then this base base
    this): a drift in the machine's speed across a round, and any cost of going second (the
    previous drain's dropped database, its WAL), fall on both alike. With one drain each and the
    order merely alternating, the second drain of a pair ran 10-15 % slower on this machine
    whichever it was, so the per-round ratios split into two clusters and their median depended
    on which cluster held the middle (bench/README.md, "How comparisons are made")."""
    return ["base", "this", "this", "base"] if r % 2 == 0 else ["this", "base", "base", "this"]


@dataclass(frozen=True)
class Drain:
    rate: float  # jobs/s
    cpu_ms: float | None  # the machine's CPU per job, server plus client, where the drain prints it


def drain_once(checkout: Path, admin: str, n: int, k: int, system: str = "store") -> Drain:
    env = {**os.environ, "DATABASE_URL": _url(admin), "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.drain", "--systems", system, "--n", str(n), "--k", str(k)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    # One round (bench.drain's default), so the first "round N: <system> R jobs/s" line is the only one.
    match = re.search(rf"round \d+: {re.escape(system)}\s+([0-9,]+) jobs/s", out.stdout)
    if out.returncode != 0 or not match:
        raise SystemExit(f"drain failed in {checkout}:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    cpu = re.search(r"CPU/job server ([0-9.]+) ms client ([0-9.]+) ms", out.stdout[match.start() :])
    return Drain(float(match.group(1).replace(",", "")), float(cpu.group(1)) + float(cpu.group(2)) if cpu else None)


def steady_server(admin: str, naptime: float) -> None:
    """Take two sources of noise out of the shared server, alike for both checkouts.

    ANALYZE within ``naptime`` seconds (default 60): each drain starts on empty tables, and the
    workers' generic plans are built in its first milliseconds, when ``todo_attempts`` is nearly
    empty and a sequential scan of it looks cheapest; they keep that plan until the next ANALYZE
    invalidates it. With the default naptime that is most of a drain in about one drain of five,
    on either checkout (bench/README.md, "How comparisons are made"). And no checkpoint inside a
    drain: each round writes hundreds of MB of WAL, so with the defaults a checkpoint (and the
    full-page images after it) lands in whichever drain is running; ``between_drains``
    checkpoints instead.
    Skipped, with a note, where the server refuses ALTER SYSTEM.
    """
    import psycopg
    from psycopg import sql

    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER SYSTEM SET autovacuum_naptime = {}").format(sql.Literal(f"{naptime:g}s")))
            conn.execute("ALTER SYSTEM SET max_wal_size = '16GB'")
            conn.execute("ALTER SYSTEM SET checkpoint_timeout = '1h'")
            conn.execute("SELECT pg_reload_conf()")
    except psycopg.Error as exc:
        print(f"note: server settings left as they are ({' '.join(str(exc).split())[:120]})", flush=True)


def between_drains(admin: str) -> None:
    """A CHECKPOINT before each drain: every drain starts from the same state of the WAL."""
    import psycopg

    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    except psycopg.Error as exc:
        print(f"note: no checkpoint between drains ({' '.join(str(exc).split())[:120]})", flush=True)


def _url(conninfo: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    # Parsed from a string, every value is a str (ConnParam's int is for keyword arguments).
    p = {key: str(value) for key, value in conninfo_to_dict(conninfo).items()}
    user = p.get("user") or ""
    password = f":{p['password']}" if p.get("password") else ""
    host = p.get("host") or "localhost"
    return (
        f"postgresql://{user}{password}@{host.replace('/', '%2F')}:{p.get('port', 5432)}/{p.get('dbname', 'postgres')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--base", required=True, type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--this", type=Path, default=HERE, help="the checkout compared (default: this one)")
    parser.add_argument(
        "--system", default="store", help="bench.drain's system: store (one todo per claim) or store-batch"
    )
    parser.add_argument(
        "--naptime", type=float, default=1.0, help="autovacuum_naptime in seconds for the run (see steady_server)"
    )
    args = parser.parse_args(argv)
    rows, ratios, cpu_ratios = [], [], []
    with bench_server() as admin:
        steady_server(admin, args.naptime)
        for r in range(args.rounds):
            order = round_order(r)
            drains: dict[str, list[Drain]] = {"base": [], "this": []}
            for name in order:
                between_drains(admin)
                d = drain_once(args.base if name == "base" else args.this, admin, args.n, args.k, args.system)
                drains[name].append(d)
                cpu = f", {d.cpu_ms:.2f} ms CPU/job" if d.cpu_ms is not None else ""
                print(f"round {r + 1}: {name:<4} {d.rate:>8,.0f} jobs/s{cpu}", flush=True)
            ratios.append(sum(d.rate for d in drains["this"]) / sum(d.rate for d in drains["base"]))
            cpus = [d.cpu_ms for d in drains["base"] + drains["this"]]
            cpu_ratio = None
            if all(c is not None for c in cpus):
                cpu_ratio = sum(d.cpu_ms or 0 for d in drains["this"]) / sum(d.cpu_ms or 0 for d in drains["base"])
                cpu_ratios.append(cpu_ratio)
            rows.append(
                [
                    r + 1,
                    " ".join(order),
                    " / ".join(f"{d.rate:,.0f}" for d in drains["base"]),
                    " / ".join(f"{d.rate:,.0f}" for d in drains["this"]),
                    f"{ratios[-1]:.3f}",
                    "-" if cpu_ratio is None else f"{cpu_ratio:.3f}",
                ]
            )
    print_table(
        ["round", "order", "base jobs/s", "this jobs/s", "this / base", "CPU/job this / base"],
        rows,
        title=f"{args.system}: N={args.n:,}, K={args.k}",
    )
    geometric = math.exp(statistics.fmean(math.log(x) for x in ratios))
    print(
        f"median ratio this / base: {statistics.median(ratios):.3f}, geometric mean {geometric:.3f} "
        "(criterion: >= 0.95)"
    )
    if cpu_ratios:
        print(f"median CPU per job this / base: {statistics.median(cpu_ratios):.3f} (server and client)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The store's drain on this checkout (or ``--this``) against another checkout, alternating.

    uv run --group bench python -m bench.compare_drain --base /path/to/checkout-of-main --n 20000 --rounds 6
    uv run --group bench python -m bench.compare_drain --base <before> --this <after> --system store-batch

One PostgreSQL server for the whole run (``bench_server``); each round runs ``python -m
bench.drain --systems <system>`` once from the base checkout and once from this one (the order
alternates between rounds, so drift in the machine's load hits both alike), each in a fresh
database migrated by its own code. It prints every round's jobs/s, the per-round ratio
(this / base) and the median ratio. The issue's criterion: with no todo scheduled and none keyed,
this checkout drains within 5 % of the base (ratio ≥ 0.95).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from bench.common import bench_server, print_table

HERE = Path(__file__).resolve().parent.parent


def drain_once(checkout: Path, admin: str, n: int, k: int, system: str = "store") -> float:
    env = {**os.environ, "DATABASE_URL": _url(admin), "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.drain", "--systems", system, "--n", str(n), "--k", str(k)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    match = re.search(rf"round 1: {re.escape(system)}\s+([0-9,]+) jobs/s", out.stdout)
    if out.returncode != 0 or not match:
        raise SystemExit(f"drain failed in {checkout}:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    return float(match.group(1).replace(",", ""))


def _url(conninfo: str) -> str:
    import psycopg

    p = psycopg.conninfo.conninfo_to_dict(conninfo)
    user = p.get("user") or ""
    password = f":{p['password']}" if p.get("password") else ""
    host = p.get("host") or "localhost"
    return (
        f"postgresql://{user}{password}@{host.replace('/', '%2F')}:{p.get('port', 5432)}/{p.get('dbname', 'postgres')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--this", type=Path, default=HERE, help="the checkout compared (default: this one)")
    parser.add_argument(
        "--system", default="store", help="bench.drain's system: store (one todo per claim) or store-batch"
    )
    args = parser.parse_args(argv)
    rows, ratios = [], []
    with bench_server() as admin:
        for r in range(args.rounds):
            order = [("base", args.base), ("this", args.this)]
            if r % 2:
                order.reverse()
            rates = {}
            for name, checkout in order:
                rates[name] = drain_once(checkout, admin, args.n, args.k, args.system)
                print(f"round {r + 1}: {name:<4} {rates[name]:>8,.0f} jobs/s", flush=True)
            ratios.append(rates["this"] / rates["base"])
            rows.append([r + 1, " then ".join(n for n, _ in order), rates["base"], rates["this"], f"{ratios[-1]:.3f}"])
    print_table(
        ["round", "order", "base jobs/s", "this jobs/s", "this / base"],
        rows,
        title=f"{args.system}: N={args.n:,}, K={args.k}",
    )
    print(f"median ratio this / base: {statistics.median(ratios):.3f} (criterion: >= 0.95)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

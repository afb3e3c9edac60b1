"""A rate-limited key under load over HTTP: N per second across several Board processes.

    uv run --group bench python -m bench.rate_limit            # 10/s, 4 processes, 16 workers, 60 s
    uv run --group bench python -m bench.rate_limit --smoke    # 5/s, 2 processes, 4 workers, 3 s

Real servers: ``--processes`` daphne processes of ``board.asgi`` on one listening socket (as
``manage.py up --processes`` serves, ``bench/serving.py``), each with its own pools and LISTEN
connection. ``--workers`` spawned processes each loop ``claim_next`` with a long poll →
``complete`` over HTTP for ``--seconds``; every todo carries one rate key limited to ``--rate`` per
second. The ring's own clock is the record: a trigger in the benchmark's database (not Board's
schema) copies every entry a claim writes into a log, so each claim's time is the one the limit
was checked against. Reported: the claims in the run's first ``--seconds`` (target: rate ×
seconds ± 1 %) and the most claims in any 1 s sliding window (target: ≤ rate).
"""

from __future__ import annotations

import time
from datetime import timedelta

from bench.common import (
    base_parser,
    bench_server,
    connect,
    create_todos,
    print_table,
    run_gang,
    setup_django,
    store_database,
)
from bench.serving import load_average, start_board, vend_agent

QUEUE = "bench"
KEY = "bench:upstream"

RING_LOG = """
CREATE TABLE IF NOT EXISTS bench_rate_log (at timestamptz NOT NULL);
CREATE OR REPLACE FUNCTION bench_rate_logged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.next IS DISTINCT FROM OLD.next AND NEW.allowance = OLD.allowance THEN
        INSERT INTO bench_rate_log VALUES (NEW.taken[OLD.next]);
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_rate_logged ON rate_limits;
CREATE TRIGGER bench_rate_logged AFTER UPDATE ON rate_limits FOR EACH ROW EXECUTE FUNCTION bench_rate_logged();
"""


def worker(index: int, barrier, url: str, token: str, seconds: float) -> dict:
    """One agent: long-poll claim_next → complete until ``seconds`` have passed."""
    import httpx

    from bench import systems

    done, last = 0, None
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        client.post("/api/v1/get_default_lease", json={})
        systems.start(barrier)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            got = client.post("/api/v1/claim_next", json={"queue": QUEUE, "wait_seconds": min(5.0, left)}).json()
            if got.get("empty", True):
                continue
            client.post("/api/v1/complete", json={"id": got["todo"]["id"]})
            done += 1
            last = time.monotonic()
    return {"done": done, "last": last}


def most_in_a_window(stamps: list, window: timedelta) -> int:
    """The most stamps in any half-open window [t, t + window), over sorted ``stamps``."""
    best, start = 0, 0
    for end, at in enumerate(stamps):
        while at - stamps[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def run(conninfo: str, *, rate: int, processes: int, workers: int, seconds: float) -> dict:
    setup_django()
    from todos.core.db import execute
    from todos.core.store import rate_limits

    with connect(conninfo) as conn:
        scope, token, team_id = vend_agent(conn, (QUEUE,))
        conn.execute(RING_LOG)
        execute(rate_limits.set_limit(None, team_id, KEY, rate, "second"), conn)
        create_todos(conn, scope, int(rate * seconds * 1.5) + 50, queue=QUEUE)
        conn.execute("UPDATE todos SET rate_key = %s", (KEY,))
    server = start_board(conninfo, processes=processes)
    try:
        gang = run_gang(worker, workers, (server.url, token, seconds), mode="processes")
    finally:
        server.stop()
    with connect(conninfo) as conn:
        stamps = [r["at"] for r in conn.execute("SELECT at FROM bench_rate_log ORDER BY at").fetchall()]
    first = stamps[0]
    within = [s for s in stamps if s < first + timedelta(seconds=seconds)]
    return {
        "claims": len(within),
        "expected": rate * seconds,
        "most_in_1s": most_in_a_window(stamps, timedelta(seconds=1)),
        "completed": gang.total,
    }


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 0)
    parser.add_argument("--rate", type=int, default=10, help="the key's limit per second (default 10)")
    parser.add_argument("--processes", type=int, default=4, help="Board processes (default 4)")
    parser.add_argument("--workers", type=int, default=16, help="worker processes (default 16)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the workers claim (default 60)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rate, args.processes, args.workers, args.seconds = 5, 2, 4, 3.0
    print(f"load average before: {load_average()}", flush=True)
    with bench_server() as admin, store_database(admin) as conninfo:
        out = run(conninfo, rate=args.rate, processes=args.processes, workers=args.workers, seconds=args.seconds)
    total_ok = abs(out["claims"] - out["expected"]) <= 0.01 * out["expected"]
    print_table(
        ["figure", "measured", "target"],
        [
            [f"claims in {args.seconds:g} s", out["claims"], f"{out['expected']:g} ± 1 %"],
            ["most claims in any 1 s window", out["most_in_1s"], f"≤ {args.rate}"],
        ],
        title=f"{args.rate}/s across {args.processes} Board processes, {args.workers} workers "
        f"(load after: {load_average()})",
    )
    return 0 if out["most_in_1s"] <= args.rate and (total_ok or args.smoke) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The Board at scale reading a streaming replica while a K = 8 drain runs on the primary.

    uv run --group bench python -m bench.replica_reads                   # 500,000 todos, N=4,000, 3 rounds
    uv run --group bench python -m bench.replica_reads --rows 5000000    # the Board-at-scale size (slow to load)
    uv run --group bench python -m bench.replica_reads --smoke

One throwaway embedded PostgreSQL (the primary) loaded as ``bench.board_scale`` loads it (``--rows``
todos over 50 endpoints of 5 teams, set-based, indexes rebuilt, analysed), then a real hot standby
of it (``pg_basebackup -R``, ``tests/support/replica.py``, the tests' own starter) streaming from
it, and one Board server (daphne) for the agents.

Scenarios, alternating order between rounds, each a drain of N todos on a queue of its own
(``bench.http_drain``'s worker: K processes, keep-alive HTTP, claim_next → complete until empty,
timed from the release to the last completion; the drained todos stay, done):

* ``no Board load``: the drain alone;
* ``pages on the replica``: meanwhile one human (an operator of one team: 10 endpoints) renders
  the ``bench.board_scale`` pages in turn in this process (Django's test client: session,
  middleware, selectors, templates), one every ``--page-interval`` seconds, with
  ``BOARD_READ_REPLICA_URL`` on the standby;
* ``pages on the primary``: the same pages without a replica, for contrast.

Beside them, the pages alone (no drain) on the replica. Printed: drain rate per scenario and its
ratio to ``no Board load`` (the target is ≥ 0.95× with the pages on the replica), page p50 / p95
per scenario (the target: p95 unchanged within noise).

On one machine the standby shares the primary's CPU cores and disk, so the replica's page queries
still compete with the drain for the machine; on separate machines they would not. ``--split-cores``
stands in for the second machine: the primary's processes, the Board server and the drain's
workers run on the first half of the CPUs, the standby's processes and the page renderer on the
other half (``sched_setaffinity``; PostgreSQL's backends inherit their postmaster's). The drain
alone then has only its half too, so every scenario's drain runs on the same CPUs.
"""

from __future__ import annotations

import os
import random
import statistics
import threading
import time
from dataclasses import dataclass, field

from bench import board_scale
from bench.common import base_parser, bench_server, connect, create_todos, print_table, setup_django, store_database
from bench.http_drain import K, http_worker
from bench.serving import LoadSampler, load_average, percentile, start_board, vend_agent

QUEUE = "bench"  # bench.http_drain's worker drains this queue
ALONE = "no Board load"
ON_REPLICA = "pages on the replica"
ON_PRIMARY = "pages on the primary"
PAGES_ONLY = "pages alone (no drain), on the replica"
DEFAULT_ROWS = 500_000
DEFAULT_PAGE_INTERVAL = 0.1


@dataclass
class Result:
    rates: list[float] = field(default_factory=list)
    pages: list[float] = field(default_factory=list)  # ms


class PageLoad:
    """One human rendering pages in turn in a thread, until stopped."""

    def __init__(self, client, pages: list, interval: float, cpus: set[int] | None = None):
        self.client, self.pages, self.interval, self.cpus = client, pages, interval, cpus
        self.times: list[float] = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None
        self.ran_on: set[int] | None = None  # the CPUs the thread ran on (``--split-cores``)

    def _run(self) -> None:
        from django.db import connections

        if self.cpus:
            os.sched_setaffinity(0, self.cpus)  # this thread only (Linux: 0 is the calling thread)
        self.ran_on = os.sched_getaffinity(0)
        rng = random.Random(17)
        order = list(self.pages)
        try:
            while not self.stop_event.is_set():
                rng.shuffle(order)
                for page in order:
                    if self.stop_event.is_set():
                        break
                    started = time.perf_counter()
                    response = self.client.get(page.url)
                    if response.status_code != 200:
                        raise RuntimeError(f"{page.url}: HTTP {response.status_code}")
                    self.times.append((time.perf_counter() - started) * 1000)
                    self.stop_event.wait(self.interval)
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc
        finally:
            connections.close_all()

    def __enter__(self) -> PageLoad:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.thread.join(timeout=120)
        if self.error is not None:
            raise self.error


def drain(conninfo: str, server, scope, token: str, n: int, k: int) -> float:
    """N todos on the drain's queue, drained over HTTP by K processes; jobs per second. The done
    todos stay (a few thousand beside the loaded ones): deleting them behind the store's back
    would leave the counts to be rebuilt."""
    from bench.common import run_gang

    with connect(conninfo) as conn:
        create_todos(conn, scope, n, queue=QUEUE)
        conn.execute("VACUUM (ANALYZE) todos")
    ready: dict[str, float] = {}
    gang = run_gang(
        http_worker, k, (server.url, token, 1), mode="processes", on_ready=lambda: ready.update(t0=time.monotonic())
    )
    last = max(w["last"] for w in gang.extra[:k] if w.get("last") is not None)
    if gang.total != n:
        raise RuntimeError(f"the drain completed {gang.total} of {n}")
    return n / (last - ready["t0"])


def server_processes(conn) -> list[int]:
    """The PostgreSQL server's postmaster (the parent of ``conn``'s backend) and its children."""
    row = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
    return server_tree(row["pid"] if isinstance(row, dict) else row[0])


def server_tree(backend: int) -> list[int]:
    """The postmaster of ``backend`` (a server process on this machine) and its children."""
    postmaster = _parent(backend)
    if postmaster is None:
        raise SystemExit("--split-cores needs the PostgreSQL servers on this machine")
    children = [pid for pid in _pids() if _parent(pid) == postmaster]
    return [postmaster, *children]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def pin(pids: list[int], cpus: set[int]) -> None:
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                os.sched_setaffinity(int(task), cpus)
        except (FileNotFoundError, ProcessLookupError):
            pass  # it ended meanwhile


def split_cpus() -> tuple[set[int], set[int]]:
    """The primary's half and the standby's half of the CPUs this process may use."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--split-cores needs at least two CPUs")
    half = len(cpus) // 2
    return set(cpus[:half]), set(cpus[half:])


def use_replica(url: str) -> None:
    from django.conf import settings

    from todos.core import replica

    settings.BOARD_READ_REPLICA_URL = url
    replica.reset()


def main(argv: list[str] | None = None) -> int:
    import logging

    from psycopg.conninfo import conninfo_to_dict

    from tests.support.replica import missing_reason, start_replica

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 4_000)
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help=f"todos loaded (default {DEFAULT_ROWS:,})")
    parser.add_argument("--k", type=int, default=K, help="drain workers (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating the order (default 3)")
    parser.add_argument(
        "--page-interval",
        type=float,
        default=DEFAULT_PAGE_INTERVAL,
        help=f"pause between two page renders, seconds (default {DEFAULT_PAGE_INTERVAL})",
    )
    parser.add_argument(
        "--split-cores",
        action="store_true",
        help="the standby and the page renderer on half the CPUs, everything else on the other half",
    )
    args = parser.parse_args(argv)
    rows = 3_000 if args.smoke else args.rows
    n = 200 if args.smoke else args.n
    rounds = 1 if args.smoke else args.rounds
    setup_django()
    from django.test import Client

    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, Result] = {}
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler():
        reason = missing_reason(conninfo)
        if reason:
            print(f"cannot run: {reason}")
            return 2
        started = time.monotonic()
        with connect(conninfo) as conn:
            board_scale.loaded_rows(conn)  # creates its bookkeeping table
            tenancy = board_scale.make_tenancy(conn)
            board_scale.load(conn, rows, tenancy, log=lambda line: print(line, flush=True))
            user = tenancy["users"][board_scale.ME]
            pages = board_scale.pages_for(conn, user, tenancy["teams"])
            scope, token, _ = vend_agent(conn, (QUEUE,))
        print(f"loaded {rows:,} todos in {time.monotonic() - started:.0f} s", flush=True)
        started = time.monotonic()
        standby = start_replica(conninfo)
        dbname = str(conninfo_to_dict(conninfo)["dbname"])
        print(f"replica made and started in {time.monotonic() - started:.0f} s", flush=True)
        primary_cpus, replica_cpus = split_cpus() if args.split_cores else (None, None)
        if primary_cpus and replica_cpus:
            # this thread, and so the Board server and the drain's worker processes it starts
            os.sched_setaffinity(0, primary_cpus)
            with connect(conninfo) as conn:
                pin(server_processes(conn), primary_cpus)
            with standby.connect(dbname) as conn:
                pin(server_processes(conn), replica_cpus)
            print(
                f"primary, Board server and drain on CPUs {sorted(primary_cpus)}; "
                f"standby and pages on {sorted(replica_cpus)}",
                flush=True,
            )
        server = start_board(conninfo, label="agents")
        client = Client()
        client.force_login(user)
        try:
            drain(conninfo, server, scope, token, 16 * args.k, args.k)  # untimed: fills the server's pools
            scenarios = [ALONE, ON_REPLICA, ON_PRIMARY]
            for r in range(rounds):
                for name in scenarios if r % 2 == 0 else list(reversed(scenarios)):
                    standby.wait_caught_up(timeout=120)
                    use_replica(standby.url(dbname) if name != ON_PRIMARY else "")
                    result = results.setdefault(name, Result())
                    if name == ALONE:
                        rate = drain(conninfo, server, scope, token, n, args.k)
                    else:
                        with PageLoad(client, pages, args.page_interval, replica_cpus) as load:
                            time.sleep(1.0)  # the pages are under way when the drain starts
                            rate = drain(conninfo, server, scope, token, n, args.k)
                        result.pages += load.times
                    result.rates.append(rate)
                    print(f"round {r + 1}: {name:<22} {rate:>7,.0f} jobs/s; load {load_average()}", flush=True)
                standby.wait_caught_up(timeout=120)
                use_replica(standby.url(dbname))
                with PageLoad(client, pages, args.page_interval, replica_cpus) as load:
                    time.sleep(5.0 if not args.smoke else 1.0)
                results.setdefault(PAGES_ONLY, Result()).pages += load.times
            from todos.core import replica

            note = replica.status_note()
        finally:
            use_replica("")
            server.stop()
            standby.destroy()

    alone = statistics.median(results[ALONE].rates)
    table = []
    for name, result in results.items():
        rate = statistics.median(result.rates) if result.rates else None
        table.append(
            [
                name,
                f"{rate:,.0f}" if rate else "—",
                " ".join(f"{x:,.0f}" for x in result.rates) or "—",
                f"{rate / alone:.2f}×" if rate else "—",
                len(result.pages),
                f"{percentile(result.pages, 50):.1f}" if result.pages else "—",
                f"{percentile(result.pages, 95):.1f}" if result.pages else "—",
            ]
        )
    print_table(
        ["scenario", "jobs/s (median)", "per round", "vs no Board load", "pages", "page p50 ms", "page p95 ms"],
        table,
        title=f"Board pages on a streaming replica while a K={args.k} HTTP drain of N={n:,} runs on the primary; "
        f"{rows:,} todos; a page every {args.page_interval} s",
    )
    print(f"replica note at the end: {note or '(none: the replica was in use)'}")
    ratio = statistics.median(results[ON_REPLICA].rates) / alone
    print(f"pages on the replica / no Board load = {ratio:.2f}× (target ≥ 0.95×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

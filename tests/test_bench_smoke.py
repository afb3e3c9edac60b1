"""The benchmarks in smoke mode: tiny sizes against the test database, so the harness (loading,
timing, verification in SQL) cannot rot between the full runs reported in ``bench/README.md``.

The store's runs use the test database itself; the bare loop and the peers get a fresh database
on the same server (``CREATE DATABASE``), dropped afterwards. A peer whose package is not
installed (the ``bench`` dependency group is not synced) is skipped with the reason.
"""

from __future__ import annotations

import os

import pytest

from bench import hot, systems
from bench.common import fresh_database
from todos.core import db

pytestmark = pytest.mark.usefixtures("store_db")


def test_store_row_at_a_time_drains_and_verifies():
    out = systems.drain_store_in(db.conninfo(), 40, 4, mode="threads")
    assert sum(out.per_worker) == 40 and out.seconds > 0


def test_store_batched_drains_and_verifies():
    out = systems.drain_store_in(db.conninfo(), 45, 3, mode="threads", batch=10)
    assert sum(out.per_worker) == 45


def test_store_variant_drains_and_verifies():
    # A session variant (schema variants would alter the shared test database: they run on fresh ones).
    out = systems.drain_store_in(db.conninfo(), 30, 2, mode="threads", variant="async-commit")
    assert sum(out.per_worker) == 30


def test_an_unknown_variant_is_refused_by_name():
    with pytest.raises(SystemExit, match="unknown variant 'fast'; known: .*no-claimer-fk"):
        systems.drain_store_in(db.conninfo(), 5, 1, mode="threads", variant="fast")


def test_bare_loop_drains_and_verifies():
    with fresh_database(db.conninfo(), "smoke_bare") as conninfo:
        out = systems.drain_bare_in(conninfo, 60, 4, mode="threads")
    assert sum(out.per_worker) == 60


def test_hot_ratio_is_measured():
    out = hot.run_hot_in(db.conninfo(), 12, 2, 4)
    updates, hot_updates, ratio = out["todos"]
    # 12 claims + 48 heartbeats + 12 completes; only heartbeats can be HOT
    assert updates >= 72 and 0 < hot_updates <= 48 and ratio <= out["ceiling"] + 1e-9


def test_crash_recovery_smoke():
    from bench import crash

    out = crash.run_crash_in(db.conninfo(), 200, kill_after=0.7, lease=2, batch=10, reaper_interval=0.3)
    assert out["r2"] > 0
    assert len(out["recovered"]) == out["in_flight"]  # every stranded lease came back and was completed


@pytest.mark.skipif(
    bool(os.environ.get("BOARD_TEST_DATABASE_URL") or os.environ.get("DATABASE_URL")),
    reason="reads the backend's CPU time from /proc: needs the embedded server on this machine",
)
def test_statement_cpu_profile():
    from bench import statement_cpu

    out = statement_cpu.measure_in(db.conninfo(), 60, 10, None)
    assert out["claim_cpu_ms"] >= 0 and out["complete_cpu_ms"] >= 0


@pytest.mark.skipif(systems.pgqueuer_available() is not None, reason=str(systems.pgqueuer_available()))
def test_pgqueuer_drains_and_verifies():
    with fresh_database(db.conninfo(), "smoke_pgq") as conninfo:
        out = systems.drain_pgqueuer_in(conninfo, 40, 2, batch_size=1, mode="threads")
    assert out.seconds > 0


@pytest.mark.skipif(systems.procrastinate_available() is not None, reason=str(systems.procrastinate_available()))
def test_procrastinate_drains_and_verifies():
    with fresh_database(db.conninfo(), "smoke_procrastinate") as conninfo:
        out = systems.drain_procrastinate_in(conninfo, 40, 4, mode="threads")
    assert out.seconds > 0


def test_charts_bench_seeds_times_and_relays(relay):
    from bench import charts

    with relay.stopped():  # the bench times the relay's passes itself
        out = charts.run_in(db.conninfo(), teams=2, queues=3, todos=20_000, runs=3, relay_todos=120, log=lambda _: None)
    assert [row[0] for row in out["charts"]] == ["1h", "1h", "24h", "24h", "7d", "7d"]
    assert [row[2] for row in out["charts"]] == [60, 60, 24, 24, 28, 28]
    assert out["relay"][0][0] == "1"  # 120 log rows: one pass


def test_schedules_bench_fires_each_tick_once():
    from bench import schedules as schedule_bench

    out = schedule_bench.measure(db.conninfo(), 20, 2, 1, compressed=True)
    assert out["fires"] == 20 and out["p95"] >= 0


def test_keyed_drain_drains_holds_the_limit_and_verifies():
    from bench import keyed_drain

    out = keyed_drain.drain_keyed_in(db.conninfo(), 60, 4, 10)
    assert out["done"] == 60 and out["keys_seen"] == 10 and out["worst"] == 1 and out["over"] == 0


def test_the_no_relay_variant_leaves_the_change_log_unrelayed(relay):
    with relay.stopped():  # the run's own relay would take the log otherwise; it resumes after
        out = systems.drain_store_in(db.conninfo(), 20, 2, mode="threads", variant="no-relay")
        assert sum(out.per_worker) == 20
        with db.connect() as conn:
            logged = conn.execute("SELECT count(*) AS n FROM change_log").fetchone()["n"]
        assert logged >= 40  # every claim and complete is still in the log: no relay took it


def test_split_cores_pins_a_server_and_a_thread():
    """bench.replica_reads --split-cores: the server's postmaster and children are found and
    pinned (new backends inherit it), and the page renderer's thread runs on its half."""
    from bench import replica_reads

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    first, second = replica_reads.split_cpus()
    assert first and second and not first & second
    everything = first | second
    with db.connect() as conn:
        backend = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        if not os.path.exists(f"/proc/{backend}"):
            pytest.skip("the test server is not on this machine")
        pids = replica_reads.server_processes(conn)
        assert backend in pids and len(pids) > 2  # the postmaster, this backend, the server's own
        try:
            replica_reads.pin(pids, second)
            with db.connect() as fresh:  # forked after the pin: inherits the postmaster's CPUs
                pid = fresh.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
                assert os.sched_getaffinity(pid) == second
        finally:
            replica_reads.pin(replica_reads.server_processes(conn), everything)
    load = replica_reads.PageLoad(client=None, pages=[], interval=0.01, cpus=first)
    load.stop_event.set()  # no pages: the thread pins itself, then ends
    with load:
        pass
    assert load.ran_on == first


def test_split_cores_refuses_a_server_it_cannot_see():
    from bench import replica_reads

    not_here = 2**22 + 12345  # above Linux's largest pid: no such process on this machine
    with pytest.raises(SystemExit, match="needs the PostgreSQL servers on this machine"):
        replica_reads.server_tree(not_here)


def test_compare_drain_mirrors_each_round_so_order_falls_on_both_checkouts():
    from collections import Counter

    from bench.compare_drain import round_order

    positions: dict[str, Counter] = {"base": Counter(), "this": Counter()}
    for r in range(2):
        order = round_order(r)
        assert Counter(order) == {"base": 2, "this": 2} and order == order[::-1]
        for i, name in enumerate(order):
            positions[name][i] += 1
    # over two rounds each checkout drains once in every position: first, second, third, last
    assert positions["base"] == positions["this"] == Counter({0: 1, 1: 1, 2: 1, 3: 1})


def test_compare_drain_reads_the_rate_a_checkout_prints(tmp_path):
    """drain_once runs the other checkout's ``bench.drain`` and reads its rate from its output; a
    checkout whose drain fails is reported with what it printed, not as a rate of zero."""
    from bench.compare_drain import drain_once

    fake = tmp_path / "checkout" / "bench"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    # The line bench.drain prints for its one round (r = 0).
    (fake / "drain.py").write_text(
        "r = 0\n"
        "print(f'round {r + 1}: store     1,234 jobs/s  (CPU/job server 0.90 ms client 0.35 ms, lock waits 1%)')\n"
    )
    out = drain_once(fake.parent, db.conninfo(), 10, 1)
    assert out.rate == 1234.0 and out.cpu_ms is not None and abs(out.cpu_ms - 1.25) < 1e-9
    (fake / "drain.py").write_text("r = 0\nprint(f'round {r + 1}: store     99 jobs/s')\n")
    assert drain_once(fake.parent, db.conninfo(), 10, 1).cpu_ms is None
    (fake / "drain.py").write_text("import sys\nprint('boom')\nsys.exit(3)\n")
    with pytest.raises(SystemExit, match="(?s)drain failed in .*boom"):
        drain_once(fake.parent, db.conninfo(), 10, 1)


def test_dependencies_fan_in_and_graph_drain_smoke():
    from bench import dependencies

    fan = dependencies.fan_in_in(db.conninfo(), 30)
    assert fan["children"] == 30 and fan["complete_ms"] > 0
    out = dependencies.drain_in(db.conninfo(), 3, 4, 2, shaped=True)
    assert out["todos"] == 12

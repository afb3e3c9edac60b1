"""The project's plumbing: settings from the environment, DATABASE_URL parsing, the background
loops, the demo seed and ``manage.py up`` end to end."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from board.db import parse_database_url
from tests import factories
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.ops.loops import SWEEPS, run_sweep_once

ROOT = Path(__file__).resolve().parent.parent


def _settings_in_subprocess(env: dict) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "BOARD_ENV")}
    full.update(env)
    full["DJANGO_SETTINGS_MODULE"] = "board.settings"
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)",
        ],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_refuses_debug():
    out = _settings_in_subprocess({"BOARD_ENV": "production", "DEBUG": "1", "SECRET_KEY": "x" * 50})
    assert out.returncode != 0 and "refuses to start with DEBUG on" in out.stderr


def test_production_refuses_missing_secret_key():
    out = _settings_in_subprocess({"BOARD_ENV": "production", "DEBUG": "0"})
    assert out.returncode != 0 and "without SECRET_KEY" in out.stderr


def test_production_starts_with_debug_off_and_a_key():
    out = _settings_in_subprocess({"BOARD_ENV": "production", "DEBUG": "0", "SECRET_KEY": "x" * 50})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "env, message",
    [
        ({"BOARD_ENV": "staging"}, "BOARD_ENV must be"),
        ({"DEBUG": "maybe"}, "DEBUG must be a boolean"),
        ({"BOARD_ATTEMPTS_CAP": "3"}, "BOARD_ATTEMPTS_CAP must be at least 5"),
        ({"BOARD_REAPER_INTERVAL": "soon"}, "BOARD_REAPER_INTERVAL must be a number"),
        ({"BOARD_DEFAULT_LEASE_SECONDS": "ten"}, "BOARD_DEFAULT_LEASE_SECONDS must be an integer"),
        ({"BEHIND_HTTPS_PROXY": "maybe"}, "BEHIND_HTTPS_PROXY must be a boolean"),
        ({"BOARD_PORT": "80000"}, "BOARD_PORT must be at most 65535"),
        ({"BOARD_PORT": "http"}, "BOARD_PORT must be an integer"),
        ({"BOARD_READ_REPLICA_URL": "mysql://replica/board"}, "BOARD_READ_REPLICA_URL must start with postgresql://"),
        ({"BOARD_READ_REPLICA_URL": "postgresql://replica:5432/"}, "BOARD_READ_REPLICA_URL must name a database"),
        ({"BOARD_READ_REPLICA_MAX_LAG": "soon"}, "BOARD_READ_REPLICA_MAX_LAG must be a number"),
        ({"BOARD_DEFAULT_TIME_ZONE": "Mars/Olympus"}, "BOARD_DEFAULT_TIME_ZONE must be an IANA time zone name"),
        ({"BOARD_DEFAULT_TIME_ZONE": "../etc/passwd"}, "BOARD_DEFAULT_TIME_ZONE must be an IANA time zone name"),
    ],
)
def test_bad_settings_are_named(env, message):
    out = _settings_in_subprocess(env)
    assert out.returncode != 0 and message in out.stderr


def test_database_url_parsing():
    config = parse_database_url("postgresql://u%40x:p%2Fw@db.example.com:6543/board?sslmode=require")
    assert config["USER"] == "u@x" and config["PASSWORD"] == "p/w"
    assert config["HOST"] == "db.example.com" and config["PORT"] == "6543"
    assert config["NAME"] == "board" and config["OPTIONS"] == {"sslmode": "require"}
    socket_config = parse_database_url("postgresql://postgres@/board?host=/tmp/pg")
    assert socket_config["HOST"] == "/tmp/pg" and socket_config["OPTIONS"] == {}


@pytest.mark.parametrize(
    "url, message",
    [("mysql://x/y", "must start with postgresql://"), ("postgresql://host:5432/", "must name a database")],
)
def test_database_url_errors(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_database_url(url)


@pytest.mark.usefixtures("store_db")
def test_reaper_command_runs_every_sweep_once(capsys):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    created = execute(agent_store.create(ep, queue="default", title="t"))
    execute(agent_store.claim(ep, created.todo.id, lease_ttl_seconds=1))
    with db.connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", [created.todo.id])
    call_command("reaper", "--once")
    out = capsys.readouterr().out
    assert "reaper: 1 changed" in out
    assert {line.split(":")[0] for line in out.splitlines()} == {s.name for s in SWEEPS}
    with db.connect() as conn:
        assert conn.execute("SELECT state FROM todos WHERE id = %s", [created.todo.id]).fetchone()["state"] == "pending"


@pytest.mark.usefixtures("store_db")
def test_sweep_repeats_while_batches_are_full():
    calls = []

    class FakeSweep:
        name, batch = "x", 2

        @staticmethod
        def run():
            calls.append(1)
            return [2, 2, 1][len(calls) - 1]

    assert run_sweep_once(FakeSweep) == 5 and len(calls) == 3


@pytest.mark.usefixtures("store_db")
def test_demo_seed_covers_every_state_and_is_idempotent():
    from todos.ops.demo import seed

    admin = factories.user("demo-admin", superuser=True)
    first = seed(admin, todos=200)
    again = seed(admin, todos=200)
    assert first.keys() == again.keys()
    with db.connect() as conn:
        states = {
            (r["state"], r["dead"])
            for r in conn.execute(
                "SELECT state, (state = 'failed' AND next_retry_at IS NULL) AS dead FROM todos"
            ).fetchall()
        }
        total = conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]
        scheduled = conn.execute(
            "SELECT count(*) AS n FROM todos WHERE state = 'pending' AND next_retry_at IS NOT NULL"
        ).fetchone()["n"]
        keyed = conn.execute("SELECT count(*) AS n FROM todos WHERE concurrency_key IS NOT NULL").fetchone()["n"]
        bound = conn.execute("SELECT DISTINCT queue, requires FROM todos WHERE requires <> '{}'").fetchall()
        defaults = conn.execute("SELECT slug, capabilities FROM endpoints WHERE capabilities <> '{}'").fetchall()
        limits = conn.execute("SELECT key, max_claimed FROM concurrency_keys WHERE max_claimed > 1").fetchall()
        rates = conn.execute("SELECT key, allowance, per, refills_at > now() AS throttled FROM rate_limits").fetchall()
        rate_waiting = conn.execute(
            "SELECT count(*) AS n FROM todos WHERE rate_key = 'api:code-host' AND state = 'pending'"
        ).fetchone()["n"]
        schedules = conn.execute("SELECT name, paused FROM schedules ORDER BY name").fetchall()
        fired = conn.execute("SELECT count(*) AS n FROM schedule_fires WHERE todo_id IS NOT NULL").fetchone()["n"]
        timeouts = conn.execute("SELECT queue, timeout_seconds FROM queue_settings").fetchall()
        release_rows = conn.execute("SELECT count(*) AS n FROM todos WHERE idempotency_key LIKE 'release-%%'")
        releases = release_rows.fetchone()["n"]
    # four schedules, three fired once, one paused; two releases' notes as graphs
    assert total == 200 + fired + releases and fired == 3 and releases >= 10
    # the support queue's short run-time limit, which a hung triage worker runs into
    assert [(r["queue"], r["timeout_seconds"]) for r in timeouts] == [("support", 30)]
    assert [r["paused"] for r in schedules] == [False, False, False, True]
    assert scheduled > 0 and keyed > 0  # some work runs later, CI fixes go one per repository
    assert [(r["key"], r["max_claimed"]) for r in limits] == [("repo:acme/billing", 2)]
    # triage goes through a rate-limited API: its key is throttled with work waiting
    assert [(r["key"], r["allowance"], r["per"], r["throttled"]) for r in rates] == [
        ("api:code-host", 10, "hour", True)
    ]
    assert rate_waiting > 0
    # some docs work needs a GPU, and the summarizer endpoint has one by default
    assert [(r["queue"], r["requires"]) for r in bound] == [("docs", ["gpu"])]
    assert [(r["slug"], r["capabilities"]) for r in defaults] == [("summarizer", ["gpu"])]
    assert first["summarizer"].capabilities == ("gpu",)
    assert {
        ("pending", False),
        ("claimed", False),
        ("done", False),
        ("canceled", False),
        ("failed", True),
        ("failed", False),
    } <= states


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_up_serves_board_and_stops_cleanly(tmp_path):
    """``manage.py up`` on a fresh data directory: embedded PostgreSQL, migrations, the admin,
    a healthy server, and a clean stop (no postmaster left behind)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
    env.update(BOARD_DATA_DIR=str(tmp_path / "pg"), BOARD_ADMIN_PASSWORD="a-long-test-password", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "up", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl-C as a terminal sends it: a runner started in the background inherits SIGINT
        # ignored, and Python then never turns it into KeyboardInterrupt in the child
        preexec_fn=_interruptible,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                if response.status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("Board did not come up")
        assert response.json() == {"ok": True, "database": "ok"}
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    assert "Created site admin 'admin'" in output
    assert "a-long-test-password" not in output
    time.sleep(0.5)
    assert not (tmp_path / "pg" / "postmaster.pid").exists(), output


@pytest.mark.usefixtures("store_db")
def test_demo_agents_take_capability_bound_work_only_with_matching_capabilities():
    """The summarizer's GPU runner takes the docs work that needs a GPU; its CPU-only runner,
    whose own capabilities replace the endpoint's defaults, never does."""
    from todos.ops.demo import SimulatedAgents, seed

    scopes = seed(factories.user("demo-admin", superuser=True), todos=60)
    agents = SimulatedAgents(scopes, speed=30, seed=1)
    agents.start()
    query = """SELECT a.claimant, t.requires FROM todo_attempts a JOIN todos t ON t.id = a.todo_id
               WHERE a.claimant LIKE 'summarizer/%%-worker-%%'"""
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with db.connect() as conn:
                rows = conn.execute(query).fetchall()
            if any(r["requires"] == ["gpu"] for r in rows) and any(
                r["claimant"].startswith("summarizer/cpu") for r in rows
            ):
                break
            time.sleep(0.3)
    finally:
        agents.close()
    assert any(r["claimant"] == "summarizer/gpu-worker-0" and r["requires"] == ["gpu"] for r in rows), rows
    assert any(r["claimant"] == "summarizer/cpu-worker-1" for r in rows), rows
    assert all(r["requires"] == [] for r in rows if r["claimant"] == "summarizer/cpu-worker-1"), rows


def test_the_demo_producer_enqueues_a_release_in_one_batch_once():
    """A release's notes go in as one create_batch; the same release again creates nothing."""
    import random

    from todos.ops.demo import BOUND_QUEUE, PRODUCER, SimulatedAgents, seed

    scopes = seed(factories.user("demo-admin", superuser=True), todos=10)
    agents = SimulatedAgents(scopes, seed=3)
    query = """SELECT id, title, payload, idempotency_key, queue FROM todos
               WHERE title LIKE 'Summarize the v2.%%' ORDER BY title"""
    with db.connect() as conn:
        seeded = {r["id"] for r in conn.execute(query)}  # the seed's own releases: not this batch's

    def batch() -> list[dict]:
        with db.connect() as conn:
            return [r for r in conn.execute(query).fetchall() if r.pop("id") not in seeded]

    agents._release_batch(scopes["summarizer"], scopes[PRODUCER.slug], random.Random(7))
    first = batch()
    agents._release_batch(scopes["summarizer"], scopes[PRODUCER.slug], random.Random(7))
    again = batch()
    queues = {r["queue"] for r in again}
    assert 3 <= len(first) <= 6 and again == first and queues == {BOUND_QUEUE}
    assert [r["payload"]["part"] for r in first] == list(range(1, len(first) + 1))

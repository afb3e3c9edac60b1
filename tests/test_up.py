"""``manage.py up`` as an operator runs it, in real processes: several started at once on an empty
database, how soon one serves, a port already in use, a crash and a restart on the embedded
server's data directory, and which forwarded headers daphne trusts.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psutil
import psycopg
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from psycopg import sql
from psycopg.rows import dict_row

from tests.support.live_server import database_url, free_port
from tests.up.processes import start_up, stop, up_environment, wait_healthy
from todos.core import db
from todos.core.store import endpoints as endpoint_store
from todos.core.store import teams as team_store

pytestmark = pytest.mark.slow


# --- Cold start: three at once on an empty database ------------------------------------------


@pytest.fixture
def empty_database(django_db_setup):
    """A new, empty database on the test run's server; its ``DATABASE_URL``. Dropped afterwards."""
    name = f"board_cold_{uuid.uuid4().hex[:10]}"
    admin = psycopg.conninfo.make_conninfo(db.conninfo(), dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(database_url())
    try:
        yield urlunsplit(parts._replace(path=f"/{name}")), psycopg.conninfo.make_conninfo(db.conninfo(), dbname=name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def run_three_at_once(env: dict, check_while_up) -> list[tuple[subprocess.Popen, str, str]]:
    """Start three ``up`` at once, wait until all answer ``/healthz`` 200, call ``check_while_up``,
    stop them (SIGTERM) and return each process with its output. Every one must have come up and
    stopped cleanly, and exactly one must have created (and printed) the site admin."""
    ports = [free_port() for _ in range(3)]
    processes = [start_up(port, env=env) for port in ports]
    try:
        for port, process in zip(ports, processes):
            assert wait_healthy(port, process).json() == {"ok": True, "database": "ok"}
        check_while_up()
    finally:
        outputs = [stop(process) for process in processes]
    for process, (out, err) in zip(processes, outputs):
        assert "IntegrityError" not in err and "Traceback" not in err, err
        assert process.returncode == 0, (out, err)
    created = [out for out, _ in outputs if "Created site admin 'admin' with password:" in out]
    assert len(created) == 1, outputs
    return [(process, out, err) for process, (out, err) in zip(processes, outputs)]


def assert_one_admin_and_each_migration_once(conninfo: str) -> None:
    with psycopg.connect(conninfo) as conn:
        assert conn.execute("SELECT username, is_superuser FROM auth_user").fetchall() == [("admin", True)]
        applied = conn.execute("SELECT app, name, count(*) FROM django_migrations GROUP BY app, name").fetchall()
    with db.connect() as conn:  # the test database: migrated once, by the test run
        expected = {(r["app"], r["name"]) for r in conn.execute("SELECT app, name FROM django_migrations").fetchall()}
    assert {(app, name) for app, name, _ in applied} == expected
    assert all(count == 1 for _, _, count in applied), applied


def test_three_processes_started_at_once_on_an_empty_database_all_come_up(empty_database):
    url, conninfo = empty_database
    run_three_at_once(up_environment(DATABASE_URL=url), lambda: assert_one_admin_and_each_migration_once(conninfo))


@pytest.mark.usefixtures("django_db_setup")  # the test database's migrations are the expected ones
def test_three_processes_started_at_once_on_a_new_embedded_data_directory(tmp_path):
    """The same with no DATABASE_URL: one embedded server started, one ``board`` database created,
    and the last of the three to stop stops the server."""
    data_dir = (tmp_path / "pg").resolve()
    env = embedded_environment(data_dir)
    env.pop("BOARD_ADMIN_PASSWORD")

    def check():
        assert_one_admin_and_each_migration_once(embedded_conninfo(data_dir))
        running = postgres_processes(data_dir)
        postmasters = [proc for proc in running if proc.ppid() not in {other.pid for other in running}]
        assert len(postmasters) == 1, running

    try:
        run_three_at_once(env, check)
        assert_no_postgres_left(data_dir)
    finally:
        for proc in postgres_processes(data_dir):
            proc.kill()


# --- How soon it serves ------------------------------------------------------------------------

# From starting the command to answering /healthz and an agent's create_for (docs/deployment.md,
# "Start-up"): well over what an idle machine needs, so a busy CI machine still passes.
SERVES_MIGRATED_SECONDS = 5.0  # the schema already there
SERVES_FRESH_SECONDS = 15.0  # a new embedded data directory or an empty database


def vend_token(conninfo: str) -> str:
    """A team and an endpoint allowed ``create_for`` on ``default``, in the database at ``conninfo``."""
    with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
        team = db.execute(team_store.create_team(slug="start-time", name="Start time"), conn)
        vended = db.execute(
            endpoint_store.vend(
                None, team_id=team.id, name="start-time", slug="start-time", verbs=["create_for"], queues=["default"]
            ),
            conn,
        )
    return vended.token


def seconds_until_serving(port: int, env: dict, token_for) -> tuple[subprocess.Popen, float]:
    """Start ``up``; the process, and the seconds until it answered ``/healthz`` 200 and then an
    agent's ``create_for`` 201 (``token_for()`` gives the token, once the schema is there)."""
    started = time.monotonic()
    process = start_up(port, env=env)
    wait_healthy(port, process, every=0.05)
    response = httpx.post(
        f"http://127.0.0.1:{port}/api/v1/create_for",
        json={"queue": "default", "title": "served"},
        headers={"Authorization": f"Bearer {token_for()}"},
        timeout=10,
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 201, response.text
    return process, elapsed


def has_password(conninfo: str, password: str) -> bool:
    """Whether the site admin's stored hash is of ``password`` (``up`` hashes with Django's default,
    PBKDF2; the test run's settings know only MD5)."""
    with psycopg.connect(conninfo) as conn:
        row = conn.execute("SELECT password FROM auth_user WHERE username = 'admin'").fetchone()
    return row is not None and PBKDF2PasswordHasher().verify(password, row[0])


def assert_serves_fresh_then_restarted(env: dict, conninfo) -> None:
    """``up`` on an empty database serves within the fresh bound; stopped and started again (with
    another admin password), within the migrated bound, and the admin then has the new password."""
    tokens: list[str] = []

    def token() -> str:
        if not tokens:
            tokens.append(vend_token(conninfo()))
        return tokens[0]

    first, fresh = seconds_until_serving(free_port(), env, token)
    out, err = stop(first)
    assert first.returncode == 0, (out, err)
    second, restarted = seconds_until_serving(
        free_port(), {**env, "BOARD_ADMIN_PASSWORD": "another-long-test-password"}, token
    )
    try:
        deadline = time.monotonic() + 30
        while not has_password(conninfo(), "another-long-test-password") and time.monotonic() < deadline:
            time.sleep(0.2)
        changed = has_password(conninfo(), "another-long-test-password")
    finally:
        out, err = stop(second)
    assert second.returncode == 0, (out, err)
    assert "Site admin 'admin': password set from BOARD_ADMIN_PASSWORD." in out, (out, err)
    assert changed
    print(f"served {fresh:.2f} s after start on an empty database, {restarted:.2f} s on a restart")
    assert fresh <= SERVES_FRESH_SECONDS, f"served {fresh:.1f} s after start on an empty database"
    assert restarted <= SERVES_MIGRATED_SECONDS, f"served {restarted:.1f} s after start on a migrated database"


@pytest.mark.usefixtures("django_db_setup")
def test_serves_soon_on_a_new_embedded_data_directory_and_sooner_on_a_restart(tmp_path):
    """The embedded server: initdb, start, migrations and the admin; then a restart of both."""
    data_dir = (tmp_path / "pg").resolve()
    try:
        assert_serves_fresh_then_restarted(embedded_environment(data_dir), lambda: embedded_conninfo(data_dir))
        assert_no_postgres_left(data_dir)
    finally:
        for proc in postgres_processes(data_dir):
            proc.kill()


def test_serves_soon_on_an_empty_database_and_sooner_on_a_restart(empty_database):
    url, conninfo = empty_database
    env = up_environment(DATABASE_URL=url, BOARD_ADMIN_PASSWORD="a-long-test-password")
    assert_serves_fresh_then_restarted(env, lambda: conninfo)


@pytest.mark.usefixtures("store_db")  # up creates its admin in the test database; emptied after
def test_a_failing_system_check_stops_up_and_skip_checks_skips_it():
    """The system checks run while the database is prepared, and still refuse to serve."""
    env = up_environment(
        DJANGO_SETTINGS_MODULE="tests.up.failing_check_settings",
        BOARD_ADMIN_USERNAME="check-test-admin",
        BOARD_ADMIN_PASSWORD="a-long-test-password",
    )
    process = start_up(free_port(), "--no-loops", env=env)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, (out, err)
    assert "SystemCheckError" in err and "tests.E001" in err, err
    assert "Board is up" not in out

    port = free_port()
    process = start_up(port, "--no-loops", "--skip-checks", env=env)
    try:
        wait_healthy(port, process)
    finally:
        out, err = stop(process)
    assert "Board is up" in out, (out, err)


# --- A port already in use ---------------------------------------------------------------------


def test_port_in_use_exits_1_with_one_line_before_anything_else(django_db_setup):
    port = free_port()
    # A PostgreSQL nobody listens on: if up touched the database before the port, the error would
    # be about the database, not the port.
    env = up_environment(DATABASE_URL="postgresql://nobody@127.0.0.1:1/nothing")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen(1)
        started = time.monotonic()
        process = start_up(port, "--demo", env=env)
        out, err = process.communicate(timeout=60)
        elapsed = time.monotonic() - started
    assert process.returncode == 1, (out, err)
    assert err.strip().splitlines() == [f"Board: cannot listen on 127.0.0.1:{port}: address already in use"], err
    assert out == ""  # nothing announced: no "preparing", no "Demo", no "Board is up"
    assert elapsed < 20, elapsed


def test_unresolvable_host_exits_1_with_one_line(django_db_setup):
    port = free_port()
    env = up_environment(DATABASE_URL="postgresql://nobody@127.0.0.1:1/nothing")
    process = start_up(port, "--host", "no-such-host.invalid", env=env)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Board: cannot listen on no-such-host.invalid:{port}: "), err
    assert out == ""


def test_an_unreachable_database_exits_1_with_one_line_naming_it(django_db_setup):
    port = free_port()
    env = up_environment(DATABASE_URL="postgresql://nobody:hunter2@127.0.0.1:1/nothing")
    process = start_up(port, env=env)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # no traceback
    assert lines[0].startswith("CommandError: cannot reach the database: ") and "port 1 failed" in lines[0], err
    assert "DATABASE_URL" in lines[0] and "hunter2" not in err
    assert "Board is up" not in out


@pytest.mark.usefixtures("store_db")  # up creates its admin in the test database; emptied after
def test_up_serves_on_an_ipv6_address():
    """IPv6 takes the other path in up (daphne binds the checked address itself)."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    with socket.socket(socket.AF_INET6) as probe:
        probe.bind(("::1", 0))
        port = probe.getsockname()[1]
    env = up_environment(
        BOARD_ADMIN_USERNAME="ipv6-test-admin", BOARD_ADMIN_PASSWORD="a-long-test-password", ALLOWED_HOSTS="[::1]"
    )
    process = start_up(port, "--no-loops", "--host", "::1", env=env)
    try:
        assert wait_healthy(port, process, host="[::1]").json()["ok"] is True
    finally:
        out, err = stop(process)
    assert f"Board is up: http://[::1]:{port}/" in out, (out, err)


# --- A crash, then a restart on the same embedded data directory -----------------------------


def postgres_processes(data_dir: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if (
            proc.info["name"] == "postgres"
            and proc.info["status"] != psutil.STATUS_ZOMBIE
            and str(data_dir) in " ".join(cmdline)
        ):
            found.append(proc)
    return found


def embedded_environment(data_dir: Path) -> dict:
    """An ``up`` environment on an embedded server in ``data_dir`` (no DATABASE_URL)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "BOARD_TEST_DATABASE_URL") and not k.startswith("PYTEST_")
    }
    env.update(
        BOARD_DATA_DIR=str(data_dir),
        BOARD_ADMIN_PASSWORD="a-long-test-password",
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="WARNING",
    )
    return env


def assert_no_postgres_left(data_dir: Path) -> None:
    deadline = time.monotonic() + 20
    while postgres_processes(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert postgres_processes(data_dir) == []
    assert not (data_dir / "postmaster.pid").exists()


def test_a_clean_stop_after_a_crash_leaves_no_postmaster(tmp_path):
    data_dir = (tmp_path / "pg").resolve()
    env = embedded_environment(data_dir)
    try:
        port = free_port()
        first = start_up(port, "--no-loops", env=env)
        wait_healthy(port, first)
        postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
        first.kill()  # SIGKILL: no exit handler runs, the postmaster stays up
        first.wait(timeout=30)
        assert psutil.pid_exists(postmaster)

        port = free_port()
        second = start_up(port, "--no-loops", env=env)
        wait_healthy(port, second)
        assert int((data_dir / "postmaster.pid").read_text().split()[0]) == postmaster  # attached to it
        out, err = stop(second, signal.SIGTERM)
        assert second.returncode == 0, (out, err)
        assert_no_postgres_left(data_dir)
    finally:
        for proc in postgres_processes(data_dir):
            proc.kill()


def embedded_conninfo(data_dir: Path) -> str:
    lines = (data_dir / "postmaster.pid").read_text().splitlines()
    return f"host={lines[4].strip()} port={lines[3].strip()} user=postgres dbname=board"


def test_sigterm_while_starting_stops_cleanly(tmp_path):
    """SIGTERM while ``up`` waits for the migration lock ends it at once, through its exit handlers:
    it announced nothing, and the last process stopping still stops the embedded server."""
    from todos.management.commands.up import MIGRATE_LOCK

    data_dir = (tmp_path / "pg").resolve()
    env = embedded_environment(data_dir)
    try:
        port = free_port()
        first = start_up(port, "--no-loops", env=env)
        wait_healthy(port, first)
        with psycopg.connect(embedded_conninfo(data_dir), autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
            second = start_up(free_port(), "--no-loops", env=env)
            deadline = time.monotonic() + 60
            while not holder.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()[0]:
                assert second.poll() is None and time.monotonic() < deadline, second.communicate()
                time.sleep(0.2)
            started = time.monotonic()
            out, err = stop(second, signal.SIGTERM)
            assert time.monotonic() - started < 10
        assert second.returncode == 128 + signal.SIGTERM, (out, err)
        assert "Board is up" not in out and "Traceback" not in err, (out, err)
        out, err = stop(first, signal.SIGTERM)
        assert first.returncode == 0, (out, err)
        assert_no_postgres_left(data_dir)
    finally:
        for proc in postgres_processes(data_dir):
            proc.kill()


# --- Forwarded headers -----------------------------------------------------------------------


@pytest.mark.usefixtures("store_db")  # up creates its admin in the test database; emptied after
@pytest.mark.parametrize(
    "flag, trusted",
    [("0", False), ("false", False), ("", False), ("1", True)],
)
def test_forwarded_headers_are_trusted_only_behind_https_proxy(flag, trusted):
    port = free_port()
    env = up_environment(
        DJANGO_SETTINGS_MODULE="tests.up.echo_settings",
        BEHIND_HTTPS_PROXY=flag,
        BOARD_ADMIN_USERNAME="proxy-test-admin",
        BOARD_ADMIN_PASSWORD="a-long-test-password",
    )
    process = start_up(port, "--no-loops", env=env)
    try:
        wait_healthy(port, process)
        response = httpx.get(
            f"http://127.0.0.1:{port}/test-echo-request/",
            headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Port": "443"},
            timeout=10,
        )
    finally:
        stop(process)
    assert response.status_code == 200, response.text
    seen = {key: response.json()[key] for key in ("remote_addr", "scheme")}
    if trusted:
        assert seen == {"remote_addr": "203.0.113.9", "scheme": "https"}
    else:
        assert seen == {"remote_addr": "127.0.0.1", "scheme": "http"}


def test_an_invalid_behind_https_proxy_is_an_error_naming_it(django_db_setup):
    env = up_environment(BEHIND_HTTPS_PROXY="maybe")
    process = start_up(free_port(), env=env)
    out, err = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "BEHIND_HTTPS_PROXY must be a boolean (1/0, true/false), got 'maybe'" in err
    assert "Board is up" not in out

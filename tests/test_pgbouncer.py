"""Board behind a real PgBouncer in transaction mode (docs/deployment.md, PgBouncer).

One ``manage.py up`` process runs for the module with ``DATABASE_URL`` naming PgBouncer (a pool of
``SERVER_CONNECTIONS`` server connections in front of the test database, ``pool_mode =
transaction``) and ``BOARD_LISTEN_URL`` naming the database itself, as an operator deploys it: its
schema check and migrations, its loops, its relay (the run's own relay is stopped meanwhile, so
every notification the tests see was relayed by that process), its long polls and MCP all work.
PgBouncer's own statistics prove the traffic went through it.

The whole suite can also run through PgBouncer: ``BOARD_TEST_PGBOUNCER=1 uv run pytest tests/api
tests/live tests/store`` (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import httpx
import psycopg
import pytest
from django.conf import settings
from django.urls import reverse

from tests import factories
from tests.board.test_bulk import insert_dead_letters, job_id_of, states
from tests.support.board import htmx, login
from tests.support.live import session_cookie
from tests.support.live_server import ROOT, database_url, free_port
from tests.support.pgbouncer import PgBouncer, missing_reason, run_through_pgbouncer_requested, start_pgbouncer
from tests.up.processes import start_up, stop, up_environment, wait_healthy
from todos.core import db

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
    # These start their own PgBouncer in front of the database; not in front of another one.
    pytest.mark.skipif(run_through_pgbouncer_requested(), reason="BOARD_TEST_PGBOUNCER=1: the run is behind one"),
]

# Fewer server connections than the up process's pool alone may open (BOARD_DB_POOL_MAX, 10, per
# pool): transaction pooling is what lets them share.
SERVER_CONNECTIONS = 3


def dbname() -> str:
    return psycopg.conninfo.conninfo_to_dict(db.conninfo())["dbname"]


@pytest.fixture(scope="module")
def bouncer(django_db_setup):
    bouncer = start_pgbouncer(db.conninfo(), pool_size=SERVER_CONNECTIONS)
    try:
        yield bouncer
    finally:
        bouncer.stop()


@dataclass
class PooledBoard:
    url: str
    process: subprocess.Popen


@pytest.fixture(scope="module")
def board(bouncer, relay, django_db_blocker):
    """``manage.py up`` through PgBouncer, relaying (the run's relay stopped meanwhile)."""
    port = free_port()
    env = up_environment(
        DATABASE_URL=bouncer.url(dbname()),
        BOARD_LISTEN_URL=database_url(),
        BOARD_RELAY="1",
        BOARD_ADMIN_PASSWORD="pooled-admin-password",
        BOARD_DB_POOL_MAX="10",
    )
    env.pop("BOARD_DB_PREPARED_STATEMENTS", None)  # the default behind a pooler: off
    with django_db_blocker.unblock():
        relay.stop()
        process = start_up(port, env=env)
        try:
            wait_healthy(port, process)
            yield PooledBoard(url=f"http://127.0.0.1:{port}", process=process)
        finally:
            out, err = stop(process)
            relay.start()
    assert "Traceback" not in err, err


def transactions_through(bouncer: PgBouncer) -> int:
    """Transactions PgBouncer has passed to the test database (its admin console, SHOW STATS)."""
    with psycopg.connect(bouncer.conninfo("pgbouncer"), autocommit=True) as conn:
        cur = psycopg.ClientCursor(conn)
        cur.execute("SHOW STATS")
        rows = cur.fetchall()
        names = [c.name for c in cur.description or ()]
    total = 0
    for row in rows:
        record = dict(zip(names, row, strict=True))
        if record["database"] == dbname():
            total += int(record.get("total_xact_count") or 0)
    return total


@dataclass
class Team:
    token: str
    user: object


@pytest.fixture
def team(store_db):
    team = factories.team()
    vended = factories.endpoint(team, queues=("default", "other"))
    user = factories.user()
    factories.member(team, user, "operator")
    return Team(vended.token, user)


def call(board: PooledBoard, token: str, verb: str, body: dict, *, timeout: float = 30) -> httpx.Response:
    return httpx.post(
        f"{board.url}/api/v1/{verb}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
    )


# --- Why the pools prepare nothing behind a pooler ---------------------------------------------


def test_pgbouncer_18_mixes_prepared_statements_of_two_clients_and_unprepared_ones_do_not(bouncer):
    """With one server connection behind it, two clients' transactions run on the same server
    session: psycopg names its prepared statements per client connection (``_pg3_0``, …), so the
    second client's prepare collides with the first's. With ``prepare_threshold=None`` (the pools'
    setting behind a pooler) the same interleaving runs."""
    single = start_pgbouncer(db.conninfo(), pool_size=1)
    try:
        with (
            psycopg.connect(single.conninfo(dbname()), autocommit=True, prepare_threshold=0) as a,
            psycopg.connect(single.conninfo(dbname()), autocommit=True, prepare_threshold=0) as b,
        ):
            a.execute("SELECT 1 AS one").fetchone()
            with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
                b.execute("SELECT 2 AS two").fetchone()
        with (
            psycopg.connect(single.conninfo(dbname()), autocommit=True, prepare_threshold=None) as a,
            psycopg.connect(single.conninfo(dbname()), autocommit=True, prepare_threshold=None) as b,
        ):
            for i in range(20):
                assert a.execute("SELECT %s::int AS n", (i,)).fetchone() == (i,)
                assert b.execute("SELECT %s::int + 1 AS n", (i,)).fetchone() == (i + 1,)
    finally:
        single.stop()


def test_the_pools_prepare_nothing_unless_told(settings):
    settings.BOARD_DB_PREPARED_STATEMENTS = False
    assert db.prepare_threshold() is None
    settings.BOARD_DB_PREPARED_STATEMENTS = True
    assert db.prepare_threshold() == db.PREPARE_THRESHOLD


def test_session_connections_go_to_the_listen_url(settings):
    settings.BOARD_LISTEN_URL = "postgresql://someone@db.example:5433/board"
    assert db.session_conninfo() == "postgresql://someone@db.example:5433/board"
    settings.BOARD_LISTEN_URL = ""
    assert db.session_conninfo() == db.conninfo()


def settings_error(**env: str) -> str:
    """What loading the settings with ``env`` writes to stderr (it must fail)."""
    full = {**os.environ, "DJANGO_SETTINGS_MODULE": "board.settings", **env}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=full, capture_output=True, text=True
    )
    assert result.returncode != 0, result
    return result.stderr


def test_a_bad_listen_url_stops_the_settings_with_its_name():
    assert "BOARD_LISTEN_URL must start with postgresql://" in settings_error(BOARD_LISTEN_URL="mysql://x/y")
    assert "BOARD_LISTEN_URL must name a database" in settings_error(BOARD_LISTEN_URL="postgresql://db.example")


def test_a_statement_timeout_through_a_pooler_is_refused_with_what_to_do_instead():
    error = settings_error(BOARD_LISTEN_URL="postgresql://db.example/board", BOARD_DB_STATEMENT_TIMEOUT="5")
    assert "BOARD_DB_STATEMENT_TIMEOUT cannot be applied through a transaction pooler" in error
    assert "ALTER ROLE" in error


def test_pgbouncer_refuses_a_startup_option(bouncer):
    """Why: the option BOARD_DB_STATEMENT_TIMEOUT would travel as is refused by PgBouncer."""
    with pytest.raises(psycopg.OperationalError, match="unsupported startup parameter"):
        psycopg.connect(bouncer.conninfo(dbname()), options="-c statement_timeout=5000").close()


# --- Board through PgBouncer ---------------------------------------------------------------------


def test_claim_and_complete_over_http(board, bouncer, team):
    before = transactions_through(bouncer)
    created = call(board, team.token, "create_for", {"queue": "default", "title": "through the pooler"})
    assert created.status_code == 201, created.text
    todo_id = created.json()["todo"]["id"]
    # Many calls, more than psycopg's prepare threshold on each pooled connection.
    for _ in range(8):
        assert call(board, team.token, "list_todos", {}).status_code == 200
    claimed = call(board, team.token, "claim_next", {"queue": "default"})
    assert claimed.status_code == 200, claimed.text
    claim = claimed.json()
    assert claim["todo"]["id"] == todo_id
    done = call(board, team.token, "complete", {"id": todo_id, "result": {"ok": True}})
    assert done.status_code == 200, done.text
    assert states() == {"done": 1}
    assert transactions_through(bouncer) - before >= 10


def test_a_long_poll_is_woken_through_the_listen_connection(board, team):
    answer: dict = {}

    def wait() -> None:
        started = time.monotonic()
        answer["response"] = call(board, team.token, "claim_next", {"queue": "other", "wait_seconds": 20})
        answer["elapsed"] = time.monotonic() - started

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(1.0)
    created = call(board, team.token, "create_for", {"queue": "other", "title": "wake up"})
    assert created.status_code == 201, created.text
    waiter.join(30)
    response = answer["response"]
    assert response.status_code == 200, response.text
    assert response.json()["todo"]["id"] == created.json()["todo"]["id"]
    # The 5-second re-check is the fallback; a notification through LISTEN comes far sooner.
    assert answer["elapsed"] < 4.5, answer["elapsed"]


def test_the_relay_reaches_a_board_socket(board, team):
    cookie = f"{settings.SESSION_COOKIE_NAME}={session_cookie(team.user)}"
    with BoardSocket(board.url, cookie) as socket_:
        status = socket_.receive()
        assert status == {"type": "status", "state": "live"}, status
        created = call(board, team.token, "create_for", {"queue": "default", "title": "seen live"})
        assert created.status_code == 201, created.text
        todo_id = created.json()["todo"]["id"]
        deadline = time.monotonic() + 10
        seen: list[dict] = []
        while time.monotonic() < deadline:
            message = socket_.receive(timeout=deadline - time.monotonic())
            seen.append(message)
            if message.get("type") == "changed" and todo_id in message.get("ids", []):
                break
        else:
            pytest.fail(f"no change for {todo_id} within 10 s: {seen}")


def test_mcp_works_the_queue(board, team):
    from tests.mcp.client import mcp_client

    async def ok(session, tool: str, arguments: dict) -> dict:
        result = await session.call_tool(tool, arguments)
        assert not result.is_error, f"{tool}: {result.content[0].text}"
        return result.structured_content

    async def scenario():
        async with mcp_client(board.url, team.token) as client:
            created = await ok(client.session, "create_for", {"queue": "default", "title": "mcp"})
            for _ in range(7):
                await ok(client.session, "list_todos", {})
            claimed = await ok(client.session, "claim_next", {"queue": "default"})
            return created, claimed

    created, claimed = asyncio.run(scenario())
    assert claimed["todo"]["id"] == created["todo"]["id"]
    assert states() == {"claimed": 1}


def test_a_bulk_job_is_worked_by_the_pooled_loops(board, team):
    """The job is started on this process's Board (direct); the up process's bulk loop (through
    PgBouncer: row locks and SET LOCAL timeouts inside one transaction) works it."""
    with db.connect() as conn:
        endpoint_id = conn.execute("SELECT id FROM endpoints ORDER BY created_at DESC LIMIT 1").fetchone()["id"]
    insert_dead_letters(endpoint_id, 300)
    client = login(team.user)
    response = client.post(reverse("bulk_start"), {"action": "retry", "scope": "matching", "state": "dead"}, **htmx())
    assert response.status_code == 200, response.content
    job_id = job_id_of(response)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with db.connect() as conn:
            job = conn.execute("SELECT state, worker FROM bulk_jobs WHERE id = %s", (job_id,)).fetchone()
        if job["state"] in ("done", "failed", "canceled"):
            break
        time.sleep(0.2)
    assert job["state"] == "done", job
    assert states() == {"pending": 300}


def test_migrations_run_through_pgbouncer(bouncer, django_db_setup):
    """A new database migrated by ``manage.py up`` through PgBouncer, its migration lock on the
    direct connection."""
    name = f"board_pooled_{os.getpid()}"
    direct = psycopg.conninfo.conninfo_to_dict(db.conninfo())
    admin = psycopg.conninfo.make_conninfo(db.conninfo(), dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        port = free_port()
        listen = database_url().rsplit("/", 1)[0] + f"/{name}"
        if "?" in database_url():
            listen += "?" + database_url().split("?", 1)[1]
        env = up_environment(DATABASE_URL=bouncer.url(name), BOARD_LISTEN_URL=listen, BOARD_RELAY="1")
        process = start_up(port, env=env)
        try:
            wait_healthy(port, process)
        finally:
            out, err = stop(process)
        assert "Traceback" not in err, err
        with psycopg.connect(psycopg.conninfo.make_conninfo(db.conninfo(), dbname=name)) as conn:
            applied = conn.execute("SELECT count(*) FROM django_migrations WHERE app = 'todos'").fetchone()[0]
            assert applied >= 8
            assert conn.execute("SELECT count(*) FROM todos").fetchone()[0] == 0
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert direct["dbname"] != name


# --- a minimal websocket client -------------------------------------------------------------------

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class BoardSocket:
    """``/ws/board/`` over a raw socket (RFC 6455: the handshake, then the server's unmasked text
    frames), enough to read what the Board sends."""

    def __init__(self, base_url: str, cookie: str):
        self.host = base_url.removeprefix("http://")
        self.cookie = cookie
        self.buffer = b""
        self.sock: socket.socket | None = None

    def __enter__(self) -> BoardSocket:
        hostname, port = self.host.rsplit(":", 1)
        self.sock = socket.create_connection((hostname, int(port)), timeout=15)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /ws/board/ HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://{self.host}\r\n"
                f"Cookie: {self.cookie}\r\n\r\n"
            ).encode()
        )
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        assert head.split(b"\r\n")[0].split()[1] == b"101", head
        return self

    def __exit__(self, *exc) -> None:
        if self.sock is not None:
            self.sock.close()

    def _fill(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        assert chunk, "the server closed the socket"
        self.buffer += chunk

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def receive(self, timeout: float = 10.0) -> dict:
        assert self.sock is not None
        self.sock.settimeout(max(timeout, 0.1))
        first, second = self._read(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(self._read(8), "big")
        payload = self._read(length)
        assert first & 0x0F == 0x1, f"expected a text frame, got opcode {first & 0x0F}"
        return json.loads(payload)

"""The database unavailable without stopping it: what counts (``todos.core.unavailable``), the
executor's classification, pooled connections the server hung up on, a statement timeout and an
exhausted pool answered 503 over HTTP and MCP, the OpenAPI 503, and the worker's retry delays.

Stopping PostgreSQL for real is in ``test_unavailable_outage.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import httpx
import jsonschema
import psycopg
import pytest
from board_client._async_client import _seconds as retry_after_seconds
from board_client.worker import BACKOFF_MAX, retry_delay
from django.db import connection as django_connection
from mcp.shared.exceptions import MCPError

from tests import factories
from tests.mcp.client import mcp_client, run
from tests.support.live_server import ROOT, start_server, stop_server
from tests.support.pools import sized_pools
from todos.agents.api import openapi
from todos.agents.api.errors import STATUS, UNAVAILABLE_SCHEMA
from todos.core import db, unavailable
from todos.core.db import Statement

STATEMENT_TIMEOUT = 2.0
POOL_TIMEOUT = 1.0

PID = Statement("SELECT pg_backend_pid() AS pid", {}, lambda rows: rows[0]["pid"])


# --- what counts ---------------------------------------------------------------------------------


def test_a_refused_connection_is_unreachable():
    with pytest.raises(psycopg.OperationalError) as raised:
        psycopg.connect("host=/nonexistent-board-socket-dir port=1 user=x dbname=x", connect_timeout=2)
    found = unavailable.classify(raised.value)
    assert found is not None and found.message == unavailable.UNREACHABLE
    assert found.code == "unavailable" and STATUS[found.code] == 503 and found.retry_after > 0


def test_a_statement_timeout_is_unavailable_and_a_bad_statement_is_not(store_db):
    with db.connect() as conn:
        conn.execute("SET statement_timeout = '50ms'")
        with pytest.raises(psycopg.errors.QueryCanceled) as canceled:
            conn.execute("SELECT pg_sleep(2)")
        with pytest.raises(psycopg.errors.UndefinedTable) as undefined:
            conn.execute("SELECT * FROM no_such_table")
        with pytest.raises(psycopg.errors.DivisionByZero) as division:
            conn.execute("SELECT 1 / 0")
    assert unavailable.classify(canceled.value).message == unavailable.TIMED_OUT
    assert unavailable.classify(undefined.value) is None
    assert unavailable.classify(division.value) is None


def test_django_s_wrapped_errors_are_classified_by_their_cause():
    """Django re-raises the driver's error as its own, with the driver's as the cause."""
    from django.db import utils as django_db

    with pytest.raises(django_db.OperationalError) as wrapped:
        with django_connection.wrap_database_errors:
            raise psycopg.OperationalError("connection failed: server closed the connection unexpectedly")
    assert unavailable.classify(wrapped.value).message == unavailable.UNREACHABLE
    with pytest.raises(django_db.DataError) as data_error:
        with django_connection.wrap_database_errors:
            raise psycopg.errors.DivisionByZero("division by zero")
    assert unavailable.classify(data_error.value) is None
    assert unavailable.classify(ValueError("no")) is None


def test_the_executor_raises_unavailable_with_the_driver_s_error_as_cause(store_db):
    with db.connect() as conn:
        conn.execute("SET statement_timeout = '50ms'")
        with pytest.raises(unavailable.Unavailable) as raised:
            db.execute(Statement("SELECT pg_sleep(2)", {}, lambda rows: rows), conn=conn)
    assert raised.value.message == unavailable.TIMED_OUT
    assert isinstance(raised.value.__cause__, psycopg.errors.QueryCanceled)
    assert "QueryCanceled" in unavailable.describe(raised.value)


def test_the_statement_timeout_setting_reaches_the_pools_connections(settings):
    settings.BOARD_DB_STATEMENT_TIMEOUT = 0.0
    assert "statement_timeout" not in db.pool_conninfo()
    settings.BOARD_DB_STATEMENT_TIMEOUT = 1.5
    options = psycopg.conninfo.conninfo_to_dict(db.pool_conninfo())["options"]
    assert options.endswith("-c statement_timeout=1500")


@pytest.mark.parametrize(
    "env, message",
    [
        ({"BOARD_DB_POOL_TIMEOUT": "0"}, "BOARD_DB_POOL_TIMEOUT must be at least 0.1"),
        ({"BOARD_DB_POOL_TIMEOUT": "soon"}, "BOARD_DB_POOL_TIMEOUT must be a number"),
        ({"BOARD_DB_STATEMENT_TIMEOUT": "-1"}, "BOARD_DB_STATEMENT_TIMEOUT must be at least 0"),
    ],
)
def test_bad_timeout_settings_are_named(env, message):
    full = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "board.settings"}
    out = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and message in out.stderr, out.stderr[-2000:]


# --- a connection the server hung up on -----------------------------------------------------------


def terminate(pid: int) -> None:
    with db.connect() as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s) AS done", (pid,)).fetchone()["done"]
        deadline = time.monotonic() + 10
        while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, "the backend did not exit"
            time.sleep(0.02)


@pytest.fixture
def one_connection_pools(settings):
    """Pools of exactly one connection, so the connection terminated is the one used next."""
    with sized_pools(settings, 1):
        yield


def test_a_pooled_connection_whose_backend_died_is_replaced_not_failed(store_db, one_connection_pools):
    """As after a database restart: the first statement afterwards succeeds."""
    before = db.execute(PID)
    assert db.execute(PID) == before  # a live connection is kept
    terminate(before)
    after = db.execute(PID)
    assert after != before


def test_the_same_for_the_async_pool(store_db, one_connection_pools):
    async def scenario():
        try:
            before = await db.aexecute(PID)
            await asyncio.to_thread(terminate, before)
            return before, await db.aexecute(PID)
        finally:
            await db.aclose_pool()

    before, after = asyncio.run(scenario())
    assert after != before


def test_a_live_connection_is_kept_whatever_its_descriptor_number(store_db, one_connection_pools):
    """A busy server has more than 1024 descriptors open; its pooled connections must not be
    mistaken for dead ones (select() cannot watch them, poll() can)."""
    import os
    import resource

    wanted = 1200
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"cannot open {wanted} descriptors here")
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    spare = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with db.pooled_connection() as conn:
            assert conn.fileno() > 1024
        first = db.execute(PID)
        assert db.execute(PID) == first
    finally:
        for fd in spare:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# --- a statement timeout and an exhausted pool, over the wire ---------------------------------------


@pytest.fixture(scope="module")
def tight_server(django_db_setup):
    """daphne with one pooled connection, a short wait for it, and a statement timeout."""
    server = start_server(
        BOARD_DB_POOL_MIN="1",
        BOARD_DB_POOL_MAX="1",
        BOARD_DB_POOL_TIMEOUT=str(POOL_TIMEOUT),
        BOARD_DB_STATEMENT_TIMEOUT=str(STATEMENT_TIMEOUT),
    )
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def tenancy(store_db):
    team = factories.team()
    user = factories.user()
    factories.member(team, user)
    return team, factories.endpoint(team, slug="worker"), user


class LockedTodos:
    """``LOCK TABLE todos`` held in an open transaction: every statement on todos waits."""

    def __enter__(self):
        self.conn = db.connect(autocommit=False)
        self.conn.execute("LOCK TABLE todos IN ACCESS EXCLUSIVE MODE")
        return self

    def __exit__(self, *exc):
        self.conn.rollback()
        self.conn.close()


def call(server, token: str, verb: str, body: dict | None = None) -> httpx.Response:
    return httpx.post(
        f"{server.url}/api/v1/{verb}", json=body or {}, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def assert_unavailable(response: httpx.Response, message: str) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    jsonschema.validate(body, UNAVAILABLE_SCHEMA)
    assert body["error"]["message"] == message
    assert response.headers["retry-after"] == str(body["error"]["retry_after"])


@pytest.mark.slow
def test_a_statement_timeout_is_503_unavailable_then_work_goes_on(tight_server, tenancy):
    _team, vended, _user = tenancy
    with LockedTodos():
        started = time.monotonic()
        response = call(tight_server, vended.token, "list_todos")
        waited = time.monotonic() - started
    assert_unavailable(response, unavailable.TIMED_OUT)
    assert STATEMENT_TIMEOUT - 0.5 < waited < STATEMENT_TIMEOUT + 5
    assert call(tight_server, vended.token, "list_todos").status_code == 200


@pytest.mark.slow
def test_an_exhausted_pool_is_503_unavailable(tight_server, tenancy):
    """The only connection is held by a statement waiting on a lock; the next request that needs
    one waits for it for BOARD_DB_POOL_TIMEOUT, then is told to retry. (A verb that needs no
    statement, such as get_default_lease, is served from the cached credential meanwhile.)"""
    _team, vended, _user = tenancy
    answers: dict = {}
    with LockedTodos():
        holder = threading.Thread(
            target=lambda: answers.setdefault("holder", call(tight_server, vended.token, "list_todos"))
        )
        holder.start()
        time.sleep(0.7)  # the holder is now blocked on the lock, holding the pool's one connection
        started = time.monotonic()
        answers["waiter"] = call(tight_server, vended.token, "list_todos")
        waited = time.monotonic() - started
        answers["cached"] = call(tight_server, vended.token, "get_default_lease")
        holder.join(30)
    assert_unavailable(answers["waiter"], unavailable.BUSY)
    assert POOL_TIMEOUT - 0.3 < waited < STATEMENT_TIMEOUT + 1
    assert_unavailable(answers["holder"], unavailable.TIMED_OUT)
    assert answers["cached"].status_code == 200
    assert call(tight_server, vended.token, "get_default_lease").status_code == 200


@pytest.mark.slow
def test_an_mcp_tool_that_meets_a_statement_timeout_is_an_unavailable_tool_error(tight_server, tenancy):
    _team, vended, _user = tenancy

    async def scenario():
        async with mcp_client(tight_server.url, vended.token) as client:
            locked = await asyncio.to_thread(LockedTodos().__enter__)
            try:
                during = await client.session.call_tool("list_todos", {})
            finally:
                await asyncio.to_thread(locked.__exit__)
            after = await client.session.call_tool("list_todos", {})
        return during, after

    try:
        during, after = run(scenario())
    except MCPError as exc:  # pragma: no cover - a protocol error would be the bug
        raise AssertionError(f"a protocol error instead of a tool error: {exc}") from exc
    assert during.is_error is True
    assert during.content[0].text == f"unavailable: {unavailable.TIMED_OUT}"
    assert after.is_error is False


@pytest.mark.slow
def test_a_board_page_that_meets_a_statement_timeout_answers_the_503_page(tight_server, tenancy):
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    _team, _vended, user = tenancy
    session = SessionStore()
    session.update(
        {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: "todos.dashboard.sign_in.backends.PasswordBackend",
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
    )
    session.create()
    cookies = {"sessionid": session.session_key}
    with LockedTodos():
        page = httpx.get(f"{tight_server.url}/todos/", cookies=cookies, timeout=30)
        # The list's rows (an htmx swap of the table) read todos; the counts may not.
        fragment = httpx.get(
            f"{tight_server.url}/todos/?state=pending",
            cookies=cookies,
            headers={"HX-Request": "true", "HX-Target": "todo-list"},
            timeout=30,
        )
    assert page.status_code == 503 and "The database is unreachable" in page.text
    assert page.headers["retry-after"]
    assert fragment.status_code == 503
    assert json.loads(fragment.headers["hx-trigger"])["board:toast"]["items"][0]["level"] == "error"
    assert httpx.get(f"{tight_server.url}/todos/", cookies=cookies, timeout=30).status_code == 200


# --- the OpenAPI document ------------------------------------------------------------------------


def test_every_operation_documents_the_503():
    document = openapi.document()
    for path, item in document["paths"].items():
        if path == "/openapi.json":
            continue
        assert item["post"]["responses"]["503"] == {"$ref": "#/components/responses/unavailable"}, path
    response = document["components"]["responses"]["unavailable"]
    assert response["headers"]["Retry-After"]["required"] is True
    schema = response["content"]["application/json"]["schema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"error": {"code": "unavailable", "message": "m", "retry_after": 2}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"error": {"code": "unavailable", "message": "m"}}, schema)


# --- the worker's delays -------------------------------------------------------------------------


def test_the_worker_waits_for_retry_after_within_its_backoff_bounds():
    assert retry_delay(1.0, None) == 1.0
    assert retry_delay(1.0, 2.0) == 2.0  # the server asks for longer: honoured
    assert retry_delay(8.0, 2.0) == 8.0  # the backoff has grown past it: the backoff
    assert retry_delay(1.0, 3600.0) == BACKOFF_MAX  # never parked for an hour
    assert retry_delay(1.0, 3600.0, ceiling=10.0) == 10.0


@pytest.mark.parametrize(
    "header, expected",
    [("2", 2.0), (" 17 ", 17.0), ("0", 0.0), ("Wed, 21 Oct 2015 07:28:00 GMT", None), ("-1", None), ("", None)],
)
def test_retry_after_is_read_in_seconds(header, expected):
    headers = {"Retry-After": header} if header else {}
    assert retry_after_seconds(httpx.Response(503, headers=headers).headers.get("Retry-After")) == expected

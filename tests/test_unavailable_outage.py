"""PostgreSQL really stopped under a running Board, then started again.

Each test stops the throwaway server of ``tests/support/outage.py`` (never the suite's own), checks
one surface while it is down — the agent API answers ``503 unavailable`` with ``Retry-After``, MCP
a JSON-RPC error (never HTML), the Board a 503 page that reloads itself, ``/healthz`` 503, the
worker backs off and keeps its lease — then starts it again and checks that the same daphne
process answers normally, without a restart.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time

import httpx
import jsonschema
import pytest
from board_client import Worker
from board_client.command import command_handler
from mcp.shared.exceptions import MCPError

from tests.mcp.client import mcp_client, refused, run
from tests.support.outage import outage_root, start_outage_board, stop_outage_board, wait_until
from todos.agents.api.errors import UNAVAILABLE_SCHEMA

pytestmark = pytest.mark.slow

POOL_TIMEOUT = 2  # seconds a request waits for a pooled connection before it says "unavailable"
# Whatever the driver says about the outage stays in the server's log.
LEAKS = re.compile(r"psycopg|socket|\.s\.PGSQL|connection to server|Traceback|OperationalError", re.IGNORECASE)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
MCP_ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def outage():
    root = outage_root()
    board = start_outage_board(root, BOARD_DB_POOL_TIMEOUT=str(POOL_TIMEOUT))
    try:
        yield board
    finally:
        stop_outage_board(board, root)


@pytest.fixture
def down(outage):
    """The database stopped for the test; started again afterwards whatever happens."""
    outage.pg.stop()
    try:
        yield outage
    finally:
        if not outage.pg.running():
            outage.pg.start()


def api(outage, verb: str, body: dict | None = None, timeout: float = 20.0) -> httpx.Response:
    return httpx.post(
        f"{outage.url}/api/v1/{verb}",
        json=body or {},
        timeout=timeout,
        headers={"Authorization": f"Bearer {outage.token}"},
    )


def api_ok(outage, verb: str, body: dict | None = None) -> bool:
    return api(outage, verb, body).status_code in (200, 201)


def assert_unavailable(response: httpx.Response) -> dict:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers.get("x-request-id")
    body = response.json()
    jsonschema.validate(body, UNAVAILABLE_SCHEMA)
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["message"].startswith("the database ")
    assert int(response.headers["retry-after"]) == body["error"]["retry_after"] > 0
    assert not LEAKS.search(response.text), response.text
    return body


# --- the agent API -----------------------------------------------------------------------------


def test_the_api_answers_503_unavailable_with_retry_after_and_recovers(down, outage):
    calls = [
        ("list_todos", {}),
        ("create_for", {"queue": "default", "title": "during the outage"}),
        ("claim_next", {"wait_seconds": 0}),
        ("claim_next", {"wait_seconds": 2}),  # a long poll too
        ("heartbeat", {"id": "td_00000000000000000000000000"}),
        ("get_default_lease", {}),
    ]
    for verb, body in calls:
        started = time.monotonic()
        assert_unavailable(api(outage, verb, body))
        # The first calls fail on connections the restart cut; later ones wait for the pool.
        assert time.monotonic() - started < POOL_TIMEOUT + 3, verb

    # The OpenAPI document needs no database, and says what the 503 looks like.
    document = httpx.get(f"{outage.url}/api/v1/openapi.json", timeout=10).json()
    assert document["paths"]["/list_todos"]["post"]["responses"]["503"] == {
        "$ref": "#/components/responses/unavailable"
    }

    outage.pg.start()
    wait_until(lambda: api_ok(outage, "list_todos"), what="the API to answer again")
    created = api(outage, "create_for", {"queue": "default", "title": "after the outage"})
    assert created.status_code == 201, created.text
    claimed = api(outage, "claim_next", {"wait_seconds": 0})
    assert claimed.status_code == 200 and claimed.json()["todo"]["id"] == created.json()["todo"]["id"]
    completed = api(outage, "complete", {"id": created.json()["todo"]["id"], "summary": "done"})
    assert completed.status_code == 200, completed.text


def test_the_server_log_says_what_the_driver_said(down, outage):
    """Details are logged (the operator needs them), not sent."""
    assert_unavailable(api(outage, "list_todos"))
    wait_until(lambda: "database unavailable in request" in outage.server.log(), timeout=10, what="the log line")


# --- MCP ---------------------------------------------------------------------------------------


def test_mcp_answers_a_json_rpc_error_never_html_and_recovers(outage):
    async def scenario():
        async with mcp_client(outage.url, outage.token) as client:
            before = await client.session.call_tool("list_todos", {})
            await asyncio.to_thread(outage.pg.stop)
            try:
                with pytest.raises(MCPError) as during:
                    await client.session.call_tool("list_todos", {})
                raw = await asyncio.to_thread(
                    httpx.post,
                    f"{outage.url}/mcp/",
                    json=INITIALIZE,
                    timeout=20,
                    # A token the server has not seen: its lookup meets the outage (an opening with
                    # the cached one is refused by the session's record instead: `opening`).
                    headers={"Accept": MCP_ACCEPT, "Authorization": f"Bearer {outage.fresh_token}"},
                )
                opening = await refused(outage.url, outage.token)
            finally:
                await asyncio.to_thread(outage.pg.start)
            # The same session, in the same daphne process, carries on once the database is back.
            deadline = asyncio.get_running_loop().time() + 40
            while True:
                try:
                    after = await client.session.call_tool("list_todos", {})
                    break
                except MCPError:
                    if asyncio.get_running_loop().time() > deadline:
                        raise
                    await asyncio.sleep(0.5)
        return before, during.value, raw, opening, after

    before, during, raw, opening, after = run(scenario())
    assert before.is_error is False
    assert during.error.message.startswith("unavailable: the database ")
    assert during.error.code == -32003

    assert raw.status_code == 503
    assert raw.headers["content-type"] == "application/json"
    assert "<html" not in raw.text.lower()
    body = raw.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32003
    assert body["error"]["message"].startswith("unavailable: ")
    assert body["error"]["data"]["code"] == "unavailable"
    assert int(raw.headers["retry-after"]) == body["error"]["data"]["retry_after"] > 0
    assert not LEAKS.search(raw.text), raw.text

    assert opening.error.message.startswith("unavailable: ")
    assert after.is_error is False


# --- the Board and /healthz --------------------------------------------------------------------


def board_get(outage, path: str, **headers: str) -> httpx.Response:
    return httpx.get(
        f"{outage.url}{path}",
        cookies={"sessionid": outage.session},
        headers=headers,
        timeout=20,
        follow_redirects=False,
    )


def test_board_pages_answer_a_503_page_that_retries_and_recover(down, outage):
    page = board_get(outage, "/todos/?state=pending")
    assert page.status_code == 503, page.text[:500]
    assert page.headers["content-type"].startswith("text/html")
    assert int(page.headers["retry-after"]) > 0
    assert "The database is unreachable" in page.text
    # It reloads itself without a script (the CSP forbids inline ones), back to the same page.
    assert re.search(r'<meta http-equiv="refresh" content="\d+; url=/todos/\?state=pending">', page.text), page.text
    assert "<script" not in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert not LEAKS.search(page.text)

    # htmx: a 503 with a toast the Board's JavaScript shows.
    fragment = board_get(outage, "/todos/counts/", **{"HX-Request": "true"})
    assert fragment.status_code == 503
    toast = json.loads(fragment.headers["hx-trigger"])["board:toast"]["items"][0]
    assert toast["level"] == "error" and "database" in toast["message"]

    # Signing in needs the database too: the login form's POST says so (CSRF passes first).
    with httpx.Client(base_url=outage.url, timeout=20) as browser:
        form = browser.get("/accounts/login/")
        assert form.status_code == 200  # the form itself needs no database
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        posted = browser.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": csrf, "username": "operator", "password": "pw-for-tests-1"},
            headers={"Referer": f"{outage.url}/accounts/login/"},
        )
        assert posted.status_code == 503
        assert f'url={outage.url}/accounts/login/"' in posted.text  # back to the form, not a re-post

    health = httpx.get(f"{outage.url}/healthz", timeout=20)
    assert health.status_code == 503 and health.json() == {"ok": False, "database": "unreachable"}
    assert int(health.headers["retry-after"]) > 0

    outage.pg.start()
    wait_until(lambda: board_get(outage, "/todos/?state=pending").status_code == 200, what="the Board to answer again")
    assert board_get(outage, "/todos/counts/", **{"HX-Request": "true"}).status_code == 200
    assert httpx.get(f"{outage.url}/healthz", timeout=20).status_code == 200


# --- the worker --------------------------------------------------------------------------------


def test_the_worker_backs_off_on_503_and_keeps_its_lease_through_an_outage(outage, caplog):
    """Down before the worker starts (claims are refused: it backs off, honouring Retry-After),
    up (it claims), down again under the running command (heartbeats refused, retried), up (the
    heartbeats resume, the lease holds, the report lands): the todo is completed exactly once."""
    created = api(outage, "create_for", {"queue": "default", "title": "through two outages"})
    assert created.status_code == 201, created.text
    todo_id = created.json()["todo"]["id"]
    caplog.set_level(logging.WARNING, logger="board_client.worker")

    outage.pg.stop()
    worker = Worker(outage.url, outage.token, lease=9, wait_seconds=1, claimant="outage-test")
    worker.add_handler("default", command_handler(["sh", "-c", "sleep 7; echo survived"]))
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("status", worker.run(max_todos=1)), daemon=True)
    guard = threading.Timer(120, worker.stop)
    guard.start()
    thread.start()
    try:
        wait_until(lambda: "cannot claim" in caplog.text, timeout=20, what="a refused claim")
        time.sleep(2)
        outage.pg.start()

        def state() -> str | None:
            with outage.pg.connect() as conn:
                return conn.execute("SELECT state FROM todos WHERE id = %s", (todo_id,)).fetchone()["state"]

        wait_until(lambda: state() == "claimed", timeout=40, what="the claim once the database is back")
        outage.pg.stop()
        wait_until(lambda: "heartbeat for" in caplog.text, timeout=20, what="a refused heartbeat")
        time.sleep(1)
        outage.pg.start()
        thread.join(90)
    finally:
        guard.cancel()
        worker.stop()
        if not outage.pg.running():
            outage.pg.start()
    assert not thread.is_alive()
    assert result["status"] == 0
    assert [o.verdict for o in worker.outcomes] == ["completed"]

    refused_claims = [r.getMessage() for r in caplog.records if r.getMessage().startswith("cannot claim")]
    assert refused_claims and all("503 unavailable" in m or "HTTP 5" in m for m in refused_claims), refused_claims
    # Retry-After (2 s) is honoured over the first backoff (1 s).
    first = refused_claims[0]
    assert "HTTP 503 unavailable:" in first and first.endswith("retrying in 2 s"), refused_claims
    assert any("heartbeat for" in r.getMessage() and "503 unavailable" in r.getMessage() for r in caplog.records)

    with outage.pg.connect() as conn:
        todo = conn.execute("SELECT state, attempt FROM todos WHERE id = %s", (todo_id,)).fetchone()
        attempts = conn.execute("SELECT outcome, summary FROM todo_attempts WHERE todo_id = %s", (todo_id,)).fetchall()
    assert todo["state"] == "done" and todo["attempt"] == 1
    assert [(a["outcome"], a["summary"].strip()) for a in attempts] == [("completed", "survived")]

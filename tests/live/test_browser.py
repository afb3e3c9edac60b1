"""The live Board in a real browser: headless Chromium against daphne serving the test database.

Every change below is made by the store from the test process, as an agent, a human on another
tab, or the reaper would make it; the page must show it without a reload.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests import factories
from tests.support.browser_watch import watched
from tests.support.live import session_cookie
from tests.support.live_server import (
    ROOT,
    free_port,
    server_environment,
)
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts"
WAIT = 10_000  # ms: how long a change may take to appear


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip("no /usr/bin/chromium (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as p:
        browser = watched(p.chromium.launch(executable_path=CHROMIUM, args=ARGS))
        yield browser
        browser.close()


@pytest.fixture
def world(store_db, monkeypatch):
    # Playwright's sync API keeps an event loop running in this thread; the ORM calls below are
    # ordinary synchronous test set-up.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    class W:
        pass

    w = W()
    w.team_a, w.team_b = factories.team(), factories.team()
    w.agent_a, w.agent_b = factories.agent(factories.endpoint(w.team_a)), factories.agent(factories.endpoint(w.team_b))
    w.user_a, w.user_b = factories.user("alice"), factories.user("bob")
    w.human_a, w.human_b = factories.member(w.team_a, w.user_a), factories.member(w.team_b, w.user_b)
    return w


def open_page(chromium, base_url: str, user, path: str, errors: list | None = None):
    context = chromium.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": session_cookie(user), "url": base_url}])
    page = context.new_page()
    if errors is not None:
        page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=WAIT)
    return page


def row(page, todo_id):
    return page.locator(f"#todo-{todo_id}")


def test_the_list_and_the_open_drawer_follow_an_agent_the_reaper_and_a_retry(chromium, asgi_server, world):
    first = execute(agent_store.create(world.agent_a, queue="default", title="watch me", max_attempts=5)).todo
    errors: list = []
    page = open_page(chromium, asgi_server.url, world.user_a, "/todos/", errors)
    expect(row(page, first.id)).to_be_visible()
    page.mouse.move(5, 5)  # the pointer is not over the list
    page.locator(f"#todo-{first.id} a.todo-link").click()
    drawer = page.locator(f"#drawer[data-todo-id='{first.id}']")
    expect(drawer).to_be_visible(timeout=WAIT)
    page.mouse.move(5, 5)

    # an agent claims it: the row and the drawer's lease card
    claim = execute(agent_store.claim_next(world.agent_a, lease_ttl_seconds=60, require_fence=True))
    expect(row(page, first.id)).to_have_class(re.compile(r"\brow-claimed\b"), timeout=WAIT)
    lease = page.locator("#drawer .lease-card time[data-countdown]")
    expect(lease).to_be_visible(timeout=WAIT)
    before = lease.get_attribute("data-countdown")

    # a heartbeat moves the lease countdown
    execute(agent_store.heartbeat(world.agent_a, first.id, lease_ttl_seconds=3600, lease_token=claim.lease_token))
    expect(lease).not_to_have_attribute("data-countdown", before, timeout=WAIT)

    # a failure: retry scheduled, the attempt closed in the history
    execute(agent_store.fail(world.agent_a, first.id, lease_token=claim.lease_token, summary="disk full"))
    expect(row(page, first.id)).to_have_class(re.compile(r"\brow-retry\b"), timeout=WAIT)
    expect(page.locator("#drawer .retry-card")).to_be_visible(timeout=WAIT)
    expect(page.locator("#drawer .attempt-list")).to_contain_text("disk full", timeout=WAIT)

    # a retry (another human, another tab): pending again
    execute(human_store.retry(world.human_a, first.id))
    expect(row(page, first.id)).to_have_class(re.compile(r"\brow-pending\b"), timeout=WAIT)

    # a claim whose holder dies; the reaper requeues it and the attempt shows as died
    execute(agent_store.claim_next(world.agent_a, lease_ttl_seconds=60))
    expect(page.locator("#drawer .attempt-open")).to_be_visible(timeout=WAIT)
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", [first.id])
        conn.execute(
            "UPDATE todo_attempts SET lease_expires_at = now() - interval '1 second' WHERE todo_id = %s", [first.id]
        )
    assert execute(background_store.reap()).count == 1
    expect(page.locator("#drawer .attempt-died")).to_have_count(1, timeout=WAIT)
    expect(row(page, first.id)).to_have_class(re.compile(r"\brow-pending\b"), timeout=WAIT)
    expect(page.locator("#drawer .attempt-open")).to_have_count(0)

    # a new todo appears at the top (the list is at its top and the pointer is elsewhere)
    second = execute(agent_store.create(world.agent_a, queue="default", title="newcomer")).todo
    expect(row(page, second.id)).to_be_visible(timeout=WAIT)
    assert page.locator("#todo-rows tr").first.get_attribute("id") == f"todo-{second.id}"
    expect(page.locator("[data-live-region='counts'] [data-count='all']")).to_have_text("2", timeout=WAIT)

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "live-board.png"), full_page=True)
    assert errors == []
    page.context.close()


def test_a_todos_own_page_stays_a_page_when_it_follows_a_change(chromium, asgi_server, world):
    """The live refresh of a todo's page brings back the page (its title the one h1), not the
    drawer that opens beside the list (an h2, without ``drawer-page``)."""
    todo = execute(agent_store.create(world.agent_a, queue="default", title="a page of its own")).todo
    page = open_page(chromium, asgi_server.url, world.user_a, f"/todos/{todo.id}/")
    title = page.locator("h1")
    expect(title).to_have_text("a page of its own")
    execute(agent_store.claim_next(world.agent_a, lease_ttl_seconds=60))
    expect(page.locator("#drawer .lease-card")).to_be_visible(timeout=WAIT)  # the refresh came
    expect(title).to_have_count(1)
    expect(title).to_have_text("a page of its own")
    expect(page.locator("#drawer")).to_have_class(re.compile(r"\bdrawer-page\b"))
    expect(page.locator("#drawer-title")).to_have_js_property("tagName", "H1")
    page.context.close()


def test_new_rows_wait_behind_a_button_while_the_pointer_is_over_the_list(chromium, asgi_server, world):
    old = [execute(agent_store.create(world.agent_a, queue="default", title=f"old {i}")).todo for i in range(3)]
    page = open_page(chromium, asgi_server.url, world.user_a, "/todos/")
    target = row(page, old[1].id)
    target.hover()
    y_before = target.bounding_box()["y"]
    newcomer = execute(agent_store.create(world.agent_a, queue="default", title="while hovering")).todo
    button = page.locator("[data-live-new-rows]")
    expect(button).to_be_visible(timeout=WAIT)
    expect(button).to_contain_text("1 new")
    assert row(page, newcomer.id).count() == 0
    assert target.bounding_box()["y"] == y_before  # the row under the pointer did not move
    button.click()
    expect(row(page, newcomer.id)).to_be_visible()
    expect(button).to_be_hidden()
    assert page.locator("#todo-rows tr").first.get_attribute("id") == f"todo-{newcomer.id}"
    page.context.close()


def test_two_humans_of_different_teams_see_only_their_own_updates(chromium, asgi_server, world):
    page_a = open_page(chromium, asgi_server.url, world.user_a, "/todos/")
    page_b = open_page(chromium, asgi_server.url, world.user_b, "/todos/")
    page_a.mouse.move(5, 5)
    page_b.mouse.move(5, 5)
    mine_a = execute(agent_store.create(world.agent_a, queue="default", title="team a's")).todo
    mine_b = execute(agent_store.create(world.agent_b, queue="default", title="team b's")).todo
    expect(row(page_a, mine_a.id)).to_be_visible(timeout=WAIT)
    expect(row(page_b, mine_b.id)).to_be_visible(timeout=WAIT)
    execute(agent_store.claim_next(world.agent_a))
    expect(row(page_a, mine_a.id)).to_have_class(re.compile(r"\brow-claimed\b"), timeout=WAIT)
    page_b.wait_for_timeout(500)
    assert row(page_a, mine_b.id).count() == 0
    assert row(page_b, mine_a.id).count() == 0
    expect(page_b.locator("[data-live-region='counts'] [data-count='all']")).to_have_text("1")
    page_a.context.close()
    page_b.context.close()


# --- the indicator across a server restart (a server of our own: the shared one stays up) -------


def start_daphne(port: int, log_path: Path) -> subprocess.Popen:
    daphne = Path(__import__("sys").executable).with_name("daphne")
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(port), "board.asgi:application"],
            cwd=ROOT,
            env=server_environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    import socket

    while time.monotonic() < deadline:
        assert process.poll() is None, log_path.read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(log_path.read_text())


def stop_daphne(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_a_burst_refreshes_the_counts_at_most_once_a_second_and_ends_exact(chromium, asgi_server, world):
    page = open_page(chromium, asgi_server.url, world.user_a, "/todos/")
    fetched: list[float] = []
    page.on("request", lambda request: fetched.append(time.monotonic()) if "/todos/counts/" in request.url else None)
    started = time.monotonic()
    for i in range(40):  # ~2 s of changes, each of which changes the counts
        execute(agent_store.create(world.agent_a, queue="default", title=f"burst {i}"))
        time.sleep(0.05)
    burst = time.monotonic() - started
    expect(page.locator("[data-live-region='counts'] [data-count='all']")).to_have_text("40", timeout=WAIT)
    time.sleep(1.2)  # a trailing refresh may still be due
    # the websocket carried ~14 messages a second (~28 in the burst): the counts were fetched
    # about once a second (plus the page's own resync when its socket went live)
    assert 1 <= len(fetched) <= burst + 3, (len(fetched), burst)
    page.context.close()


# the server is away on purpose: the socket's reconnection attempts are refused meanwhile
@pytest.mark.console_allows(r"WebSocket connection to '\S+/ws/board/' failed")
def test_the_indicator_says_reconnecting_while_the_server_is_away_and_the_page_resyncs(chromium, world, tmp_path):
    todo = execute(agent_store.create(world.agent_a, queue="default", title="changes while away")).todo
    port = free_port()
    log = tmp_path / "daphne.log"
    process = start_daphne(port, log)
    try:
        page = open_page(chromium, f"http://127.0.0.1:{port}", world.user_a, "/todos/")
        page.mouse.move(5, 5)
        status = page.locator("#live-status")
        stop_daphne(process)
        expect(status).to_have_attribute("data-state", "reconnecting", timeout=WAIT)
        expect(status).to_have_text("reconnecting")
        execute(agent_store.claim_next(world.agent_a))  # nobody is listening: only a resync can show it
        process = start_daphne(port, log)
        expect(status).to_have_attribute("data-state", "live", timeout=30_000)
        expect(row(page, todo.id)).to_have_class(re.compile(r"\brow-claimed\b"), timeout=WAIT)
        page.context.close()
    finally:
        stop_daphne(process)


def test_an_open_drawer_s_dependency_graph_follows_its_children_and_parents(chromium, asgi_server, world):
    parent = execute(agent_store.create(world.agent_a, queue="default", title="plan the release")).todo
    child = execute(agent_store.create(world.agent_a, queue="default", title="ship it", after=[parent.id])).todo
    # the drawer alone (its own page): only the open todo and its relatives reach it
    page = open_page(chromium, asgi_server.url, world.user_a, f"/todos/{parent.id}/")
    children = page.locator("#drawer .relatives-list").last
    expect(children).to_contain_text("Blocked")
    # an agent claims and completes the parent: its child unblocks in the same statement
    claim = execute(agent_store.claim(world.agent_a, parent.id))
    execute(agent_store.complete(world.agent_a, parent.id, lease_token=claim.lease_token))
    expect(children).to_contain_text("Pending", timeout=WAIT)
    # the child changes on its own: the parent's drawer shows it
    execute(agent_store.claim(world.agent_a, child.id))
    expect(children).to_contain_text("Claimed", timeout=WAIT)

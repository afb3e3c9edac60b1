"""The Board in a real browser: headless Chromium (the Debian package) driven by Playwright,
against daphne serving the test database.

Skipped only when /usr/bin/chromium is missing outside CI; in CI (``CI`` set) a missing browser
fails the run. Screenshots land in ``test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.support.board import make
from tests.support.browser_watch import EXPECTED_STATUS, watched
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store

CHROMIUM = "/usr/bin/chromium"
# Waits use locators and ``expect`` (never ``wait_for_function``): the Board's CSP forbids eval,
# and that is part of what this test checks.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
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

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

if not os.path.exists(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(autouse=True)
def allow_sync_orm_beside_playwright(monkeypatch):
    """Playwright's sync API keeps an event loop running in this thread, which Django's guard
    mistakes for async code; set up before ``store_db`` so it is undone after its teardown."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def fast_passwords():
    """Overrides the package fixture: daphne checks passwords with the default hashers."""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = watched(p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True))
        yield browser
        browser.close()


@pytest.fixture
def page(browser, asgi_server):
    context = browser.new_context(
        base_url=asgi_server.url, viewport={"width": 1440, "height": 900}, color_scheme="light"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.problems = watch(page)
    yield page
    context.close()
    # Any console error, CSP violation (Chromium reports them as console errors), uncaught
    # exception or browser-native dialog (the Board asks in its own) fails the test.
    assert page.problems == [], page.problems


def watch(page) -> list[str]:
    """Collect what must never happen on a Board page; the caller asserts it stayed empty."""
    problems: list[str] = []

    def console(message):
        # 409 and 422 are answers the Board swaps in (a lost race, a refused field: htmx-config's
        # responseHandling), which Chromium still logs as a failed resource
        if message.type == "error" and not EXPECTED_STATUS.search(message.text):
            problems.append(f"console: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def native_dialog(dialog):
        problems.append(f"native {dialog.type} dialog: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", native_dialog)
    return problems


def sign_in(page, username: str, password: str = "pw-for-tests-1") -> None:
    page.goto("/todos/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/todos/$"))


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def state_of(todo_id: str) -> str:
    with connect() as conn:
        row = conn.execute("SELECT state, next_retry_at FROM todos WHERE id = %s", (todo_id,)).fetchone()
    if row["state"] == "failed":
        return "retry" if row["next_retry_at"] else "dead"
    return row["state"]


def search(page, term: str, rows: int) -> None:
    page.fill("#q", term)
    page.press("#q", "Enter")
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(rows)


def test_operator_flow_in_a_real_browser(world, page):
    execute(
        agent_store.create(
            world.agent,
            queue="email",
            title="Send the welcome email",
            kind="email.send",
            payload={"to": "ada@example.com", "template": "welcome", "api_key": "sk-live-123"},
        )
    )
    pending = make(world, "pending", title="Reconcile invoices for March")
    to_fail = make(world, "pending", title="Resize the uploaded avatar")
    make(world, "claimed", title="Crawl the partner catalogue")
    make(world, "retry", title="Sync CRM contacts")
    dead = make(world, "dead", title="Charge card ending 4242")
    dead2 = make(world, "dead", title="Post the weekly digest")
    make(world, "done", title="Generate thumbnails")
    with connect() as conn:  # give the list a spread of ages
        conn.execute("UPDATE todos SET created_at = created_at - (random() * interval '3 hours')")

    sign_in(page, "alice")
    assert page.locator("#todo-rows tr.todo-row").count() == 8
    assert page.locator("#live-status").count() == 1  # the live indicator (live.js drives it)

    # filter: the dead-letter tab swaps the list and puts the filter in the URL
    page.click("#state-counts a.tab.state-dead")
    page.wait_for_url(re.compile(r"state=dead"))
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(2)
    assert page.locator('#state-counts a[aria-current="true"]').inner_text().startswith("✕")
    page.go_back()
    page.wait_for_url(re.compile(r"/todos/$"))
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(8)

    # search, on a freshly loaded page: typing within milliseconds of "back" races htmx's
    # history restore of the form, which no person can do
    page.reload()
    search(page, "invoices", 1)
    assert "q=invoices" in page.url
    search(page, "", 8)
    shot(page, "todos-list")

    # open the drawer beside the list; claim; complete with a JSON result
    page.click(f"#todo-{pending.id} a.todo-link")
    drawer = page.locator(f'#drawer[data-todo-id="{pending.id}"]')
    drawer.wait_for()
    assert "Reconcile invoices for March" in drawer.inner_text()
    assert re.search(r"/todos/(\?.*)?$", page.url), page.url  # still on the list
    drawer.get_by_role("button", name="Claim").click()
    # the toast first: it dismisses itself after a few seconds
    expect(page.locator("#toasts .toast-success").last).to_contain_text("Claimed")
    page.locator("#drawer .lease-card").wait_for()
    assert "Board · alice" in page.locator("#drawer").inner_text()
    expect(page.locator(f"#todo-{pending.id}")).to_contain_text("Board · alice")
    page.locator("#drawer summary", has_text="Complete…").click()
    page.fill(f"#complete-result-{pending.id}", "{not json")
    page.locator("#drawer form button", has_text="Complete").click()
    page.locator("#drawer .form-error").wait_for()
    assert "result: not valid JSON" in page.locator("#drawer .form-error").inner_text()
    assert state_of(pending.id) == "claimed"
    page.fill(f"#complete-result-{pending.id}", '{"matched": 12}')
    page.fill(f"#complete-note-{pending.id}", "all reconciled")
    page.locator("#drawer form button", has_text="Complete").click()
    page.locator("#drawer .badge.state-done").wait_for()
    assert state_of(pending.id) == "done"
    assert "all reconciled" in page.locator("#drawer").inner_text()
    expect(page.locator(f"#todo-{pending.id} .badge")).to_contain_text("Done")

    # claim from the row, then fail from the drawer
    page.locator(f"#todo-{to_fail.id} button", has_text="Claim").click()
    expect(page.locator(f"#todo-{to_fail.id}")).to_contain_text("Board · alice")
    page.click(f"#todo-{to_fail.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{to_fail.id}"]').wait_for()
    page.locator("#drawer summary", has_text="Fail…").click()
    page.fill(f"#fail-note-{to_fail.id}", "image is corrupt")
    page.locator("#drawer form button.warn", has_text="Fail").click()
    page.locator("#drawer .retry-card").wait_for()
    assert state_of(to_fail.id) == "retry"

    # retry a dead letter from its row; cancel another from the drawer (a confirm dialog)
    page.locator(f"#todo-{dead.id} button", has_text="Retry").click()
    expect(page.locator(f"#todo-{dead.id} .badge")).to_contain_text("Pending")
    assert state_of(dead.id) == "pending"
    page.click(f"#todo-{dead2.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{dead2.id}"]').wait_for()
    page.locator("#drawer .dead-card").wait_for()
    shot(page, "todos-drawer")
    page.locator("#drawer button", has_text="Cancel…").click()
    dialog = page.locator("#drawer dialog[open]")
    expect(dialog).to_contain_text("Cancel this todo for good?")
    dialog.get_by_role("button", name="Cancel this todo").click()
    page.locator("#drawer .badge.state-canceled").wait_for()
    assert state_of(dead2.id) == "canceled"
    # the state counts followed
    expect(page.locator('[data-count="canceled"]')).to_have_text("1")

    # keyboard: Esc closes the drawer, / focuses search, j moves, o opens
    page.keyboard.press("Escape")
    expect(page.locator("#drawer[data-todo-id]")).to_have_count(0)
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("o")
    expect(page.locator("#drawer[data-todo-id]")).to_have_count(1)

    # times are rendered by the server in the viewer's zone, with the exact instant on hover
    title = page.locator("#drawer time[datetime]").first.get_attribute("title")
    assert title and re.search(r"\d{2}:\d{2}:\d{2}", title)
    assert not [p for p in page.problems if "Content Security Policy" in p or "Refused" in p], page.problems

    # dark theme toggle persists
    page.click("[data-theme-toggle]")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.click("#todo-rows tr.todo-row >> nth=0 >> a.todo-link")
    page.locator("#drawer[data-todo-id]").wait_for()
    shot(page, "todos-drawer-dark")


def test_overview_and_no_javascript_fallback(world, browser, asgi_server):
    for state in ("pending", "pending", "claimed", "retry", "dead", "done"):
        make(world, state)
    context = browser.new_context(
        base_url=asgi_server.url, viewport={"width": 1440, "height": 900}, java_script_enabled=False
    )
    page = context.new_page()
    sign_in(page, "alice")
    todo = make(world, "pending", title="claimed without JavaScript")
    page.goto("/todos/?state=pending")
    page.locator(f"#todo-{todo.id} button", has_text="Claim").click()
    page.wait_for_load_state()
    assert "Claimed" in page.locator("#toasts").inner_text()
    assert state_of(todo.id) == "claimed"
    page.goto("/")
    assert page.locator("#overview-table tbody tr").count() >= 1
    shot(page, "overview")
    context.close()


@contextmanager
def bulk_loop():
    """The bulk-jobs loop (todos.ops.loops), running in this process for the block."""
    from todos.ops import loops

    stop = threading.Event()
    threads = loops.start_loops(stop, tuple(s for s in loops.SWEEPS if s.name == "bulk"))
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)


def test_every_page_renders_without_csp_violations(world, page):
    from tests.board.test_bulk import insert_dead_letters
    from todos.core.store import human as human_store

    for state in ("pending", "claimed", "retry", "dead", "done", "mine"):
        make(world, state, title=f"An example {state} todo")
    insert_dead_letters(world.acme_ep.id, 30)
    execute(human_store.pause_queue(world.alice, world.acme.id, "email"))
    factories.member(world.acme, factories.user("carol"), "viewer")
    sign_in(page, "adam")
    for name, path in (
        ("overview", "/"),
        ("agents", "/agents/"),
        ("activity", "/activity/"),
        ("teams", "/teams/"),
        ("team", "/teams/acme/"),
        ("new-todo", "/todos/new/"),
        ("dead-letters", "/todos/dead-letters/"),
    ):
        page.goto(path)
        page.locator("main").wait_for()
        shot(page, f"page-{name}")
    page.goto("/todos/?state=dead")
    page.locator("button", has_text="Retry all matching").click()
    page.locator("#bulk-panel .bulk-preview").wait_for()
    shot(page, "bulk-preview")
    page.locator("#bulk-panel button.primary").click()
    expect(page.locator("#bulk-panel .bulk-job")).to_have_attribute("data-state", "queued")
    with bulk_loop():  # the session's daphne runs no loops: the job waits for this process's
        expect(page.locator("#bulk-panel .bulk-report")).to_contain_text("31 changed", timeout=15_000)
    shot(page, "bulk-report")
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(0)  # the list refreshed: none left
    assert not [p for p in page.problems if "Content Security Policy" in p or "Refused" in p], page.problems
    page.goto("/")
    page.locator("summary", has_text="adam").click()
    page.locator("button", has_text="Sign out").click()
    page.wait_for_url(re.compile(r"/accounts/login/"))
    shot(page, "login")


def test_charts_draw_and_follow_the_work_live(world, page):
    """/charts/: the SVG charts and their table render without a CSP violation or console error,
    a range and queue can be chosen, and a completion reaches the chart through the live pipeline
    (throttled to one refresh per five seconds)."""
    for state in ("done", "done", "dead"):
        make(world, state)
    sign_in(page, "alice")
    page.goto("/charts/")
    outcomes = page.locator("figure.chart-outcomes svg")
    expect(outcomes).to_have_attribute("aria-label", "Last hour, all queues: 2 completed, 1 failed, 0 died")
    expect(page.locator("figure.chart-outcomes g.chart-column")).to_have_count(60)
    expect(page.locator("figure.chart-times circle").first).to_be_visible()
    expect(page.locator("#live-status")).to_have_text("live")
    shot(page, "charts")
    todo = execute(agent_store.create(world.agent, queue="email", title="charted")).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.complete(world.agent, todo.id))
    expect(outcomes).to_have_attribute(
        "aria-label", "Last hour, all queues: 3 completed, 1 failed, 0 died", timeout=15_000
    )
    page.locator("summary", has_text="The numbers as a table").click()
    expect(page.locator(".chart-table tbody tr")).to_have_count(60)
    page.reload()  # the queue list now offers email too
    page.check("input[name=range][value='7d']")
    page.select_option("#chart-queue", "email")
    page.locator(".chart-controls button[type=submit]").click()
    expect(page.locator("figure.chart-outcomes svg")).to_have_attribute(
        "aria-label", "Last 7 days, queue email: 1 completed, 0 failed, 0 died"
    )
    page.goto("/")
    expect(page.locator("#overview-chart svg")).to_have_attribute(
        "aria-label", "Last hour, all queues: 3 completed, 1 failed, 0 died"
    )
    shot(page, "overview-chart")
    timed = execute(agent_store.create(world.agent, queue="default", title="timed", max_attempts=3)).todo
    execute(agent_store.claim(world.agent, timed.id))
    execute(agent_store.heartbeat(world.agent, timed.id))
    execute(agent_store.fail(world.agent, timed.id, summary="boom"))
    with connect() as conn:
        conn.execute("UPDATE todos SET next_retry_at = now() WHERE id = %s", (timed.id,))
    execute(agent_store.claim(world.agent, timed.id))
    page.goto(f"/todos/{timed.id}/")
    expect(page.locator("figure.timeline g.timeline-span")).to_have_count(2)
    expect(page.locator("figure.timeline .timeline-failed rect")).to_be_visible()
    page.locator("figure.timeline").scroll_into_view_if_needed()
    shot(page, "attempt-timeline")
    assert not page.problems, page.problems

"""Vending an endpoint in a real browser (headless Chromium, the Debian package, driven by
Playwright against daphne on the test database), then using its token through the API and
watching the Board follow live: "last seen" on the endpoints list and the new todo on the list
of todos, without a reload. A screenshot of the reveal page goes to ``test-artifacts/``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest

from tests.support.browser_watch import watched
from tests.support.endpoints import endpoint
from tests.support.live import session_cookie
from tests.support.live_server import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

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
WAIT = 10_000  # ms

if not os.path.exists(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(autouse=True)
def allow_sync_orm_beside_playwright(monkeypatch):
    """Playwright's sync API keeps an event loop running in this thread, which Django's guard
    mistakes for async code (set up before ``store_db``, so undone after its teardown)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing")
    with playwright_api.sync_playwright() as p:
        browser = watched(p.chromium.launch(executable_path=CHROMIUM, args=ARGS))
        yield browser
        browser.close()


def test_vend_in_the_browser_then_the_token_s_work_appears_live(chromium, asgi_server, world):
    context = chromium.new_context(
        base_url=asgi_server.url, viewport={"width": 1400, "height": 1000}, color_scheme="light"
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_server.url)
    context.add_cookies([{"name": "sessionid", "value": session_cookie(world.adam_user), "url": asgi_server.url}])
    problems: list[str] = []
    page = context.new_page()
    page.set_default_timeout(WAIT)
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    # the endpoints screen, and the vend form for Acme
    page.goto("/endpoints/")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.get_by_role("link", name="Vend an endpoint").click()
    page.wait_for_url(re.compile(r"/endpoints/new/\?team=acme$"))
    page.fill("#ep-name", "Browser Bot 2")
    expect(page.locator("#ep-slug")).to_have_value("browser-bot-2")  # derived as you type
    page.get_by_role("checkbox", name="create_for", exact=True).check()
    page.get_by_role("checkbox", name="default", exact=True).check()
    page.fill("#ep-queues-extra", "browser-q")
    page.fill("#ep-lease", "600")
    page.fill("#ep-expires", "2099-01-31T18:00")  # a custom expiry selects "Until…"
    expect(page.locator('input[name="lifetime"][value="custom"]')).to_be_checked()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "endpoint-vend-form.png"), full_page=True)
    page.get_by_role("button", name="Vend endpoint").click()

    # the reveal: the token is the copy button's target
    expect(page.get_by_role("heading", name=re.compile("Vended Browser Bot 2"))).to_be_visible()
    target = page.locator("button[data-copy='token-value']").get_attribute("data-copy")
    token = page.locator(f"#{target}").inner_text().strip()
    assert re.fullmatch(r"bd_[A-Za-z0-9_-]{43}", token), token
    page.locator("button[data-copy='token-value']").click()
    expect(page.locator("#toasts")).to_contain_text("Copied the token")
    assert page.evaluate("navigator.clipboard.readText()") == token
    expect(page.locator("#curl-example")).to_contain_text(f"Bearer {token}")
    expect(page.locator("#mcp-config")).to_contain_text(f"{asgi_server.url}/mcp/")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "endpoint-reveal.png"), full_page=True)
    row = endpoint("browser-bot-2")
    assert row["scope_queues"] == ["browser-q", "default"] and row["default_lease_ttl_seconds"] == 600
    assert "create_for" in row["scope_verbs"] and row["expires_at"].year == 2099

    # back: the form, no token
    page.go_back()
    page.wait_for_url(re.compile(r"/endpoints/new/"))
    assert token not in page.content()

    # the endpoints list and the todos list, each live in its own tab
    endpoints_page = context.new_page()
    endpoints_page.set_default_timeout(WAIT)
    endpoints_page.goto("/endpoints/")
    expect(endpoints_page.locator("#live-status")).to_have_attribute("data-state", "live")
    last_seen = endpoints_page.locator("#endpoint-browser-bot-2 [data-last-seen]")
    expect(last_seen).to_have_text("never")
    assert token not in endpoints_page.content()
    todos_page = context.new_page()
    todos_page.set_default_timeout(WAIT)
    todos_page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    todos_page.goto("/todos/")
    expect(todos_page.locator("#live-status")).to_have_attribute("data-state", "live")
    todos_page.mouse.move(5, 5)  # the pointer is not over the list

    # the token at work: it creates a todo through the API
    with httpx.Client(base_url=asgi_server.url, timeout=10) as http:
        created = http.post(
            "/api/v1/create_for",
            json={"queue": "browser-q", "title": "Made by the browser bot"},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert created.status_code == 201, created.text
    todo_id = created.json()["todo"]["id"]
    expect(todos_page.locator(f"#todo-{todo_id}")).to_be_visible()
    expect(todos_page.locator(f"#todo-{todo_id}")).to_contain_text("Made by the browser bot")
    expect(last_seen).to_have_text(re.compile(r"^\d+s ago$"))
    endpoints_page.screenshot(path=str(ARTIFACTS / "endpoints-list.png"), full_page=True)
    todos_page.screenshot(path=str(ARTIFACTS / "endpoint-todo-live.png"))
    assert problems == []
    context.close()

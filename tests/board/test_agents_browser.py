"""The Agents page's actions in a real browser: a team admin pauses and resumes an endpoint's
claims and revokes it after the Board's confirmation; another person's open page follows the
pause live, without a reload. The ``page`` fixture fails a test on any console error."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in, watch
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.errors import Paused
from todos.core.store import agent as agent_store

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def endpoint_state(slug: str) -> dict:
    with connect() as conn:
        return conn.execute("SELECT state, claims_paused_at FROM endpoints WHERE slug = %s", (slug,)).fetchone()


def test_an_admin_pauses_and_resumes_and_an_operators_page_follows_live(world, page, browser, asgi_server):
    context = browser.new_context(base_url=asgi_server.url, viewport={"width": 1440, "height": 900})
    watcher = context.new_page()
    watcher.set_default_timeout(10_000)
    problems = watch(watcher)
    sign_in(watcher, "alice")  # an operator: sees the page, no buttons
    watcher.goto("/agents/")
    watcher_row = watcher.locator("#agent-acme-worker")
    expect(watcher_row).to_be_visible()
    expect(watcher_row.get_by_role("button", name="Pause claims")).to_have_count(0)
    expect(watcher.locator("#live-status")).to_have_text("live")

    sign_in(page, "adam")
    page.goto("/agents/")
    row = page.locator("#agent-acme-worker")
    row.get_by_role("button", name="Pause claims").click()
    expect(page.locator("#agent-acme-worker")).to_contain_text("claims paused")
    expect(page.locator("#agent-acme-worker")).to_contain_text("by adam")
    assert endpoint_state("acme-worker")["claims_paused_at"] is not None
    with pytest.raises(Paused):
        execute(agent_store.claim_next(world.agent))
    # the operator's page shows it without a reload (the live region refreshes)
    expect(watcher.locator("#agent-acme-worker")).to_contain_text("claims paused", timeout=15_000)

    page.locator("#agent-acme-worker").get_by_role("button", name="Resume claims").click()
    expect(page.locator("#agent-acme-worker").get_by_role("button", name="Pause claims")).to_be_visible()
    expect(watcher.locator("#agent-acme-worker")).not_to_contain_text("claims paused", timeout=15_000)
    assert endpoint_state("acme-worker")["claims_paused_at"] is None
    context.close()
    assert problems == [], problems


def test_revoke_from_the_agents_page_asks_first(world, page):
    make(world, "pending")
    sign_in(page, "adam")
    page.goto("/agents/")
    page.locator("#agent-acme-worker").get_by_role("link", name="Revoke…").click()
    expect(page.locator("h1")).to_contain_text("Revoke")
    expect(page.locator(".dead-card")).to_contain_text("1 live todo will be dead-lettered")
    page.get_by_role("link", name="Cancel").click()
    expect(page).to_have_url(f"{page.url.split('/agents/')[0]}/agents/#agent-acme-worker")
    assert endpoint_state("acme-worker")["state"] == "active"
    page.locator("#agent-acme-worker").get_by_role("link", name="Revoke…").click()
    page.fill("#revoke-note", "leaked")
    page.get_by_role("button", name="Revoke and dead-letter 1").click()
    expect(page.locator("#agent-acme-worker")).to_contain_text("revoked")
    expect(page.locator("#agent-acme-worker").get_by_role("link", name="Revoke…")).to_have_count(0)
    assert endpoint_state("acme-worker")["state"] == "revoked"

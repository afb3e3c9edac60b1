"""The net under every browser test (tests/support/browser_watch.py) catches what it must: a
CSP violation and an uncaught exception on a page of any context a browser fixture opened, not
only on the Board's ``page`` fixture."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.support import browser_watch

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser


def test_a_csp_violation_or_an_exception_in_any_context_is_caught(world, browser, asgi_server):
    context = browser.new_context(base_url=asgi_server.url)  # a bare context, not the page fixture
    page = context.new_page()
    sign_in(page, "alice")
    expect(page.locator("main")).to_be_visible()
    assert browser_watch.PROBLEMS == []
    # an inline style attribute is what the Board's CSP refuses (as htmx's style="" once did)
    page.evaluate("document.body.setAttribute('style', 'color: red')")
    page.evaluate("setTimeout(() => { throw new Error('boom from a test') }, 0)")
    page.locator("#live-status").wait_for(state="attached")
    page.wait_for_timeout(300)
    context.close()
    caught = list(browser_watch.PROBLEMS)
    browser_watch.PROBLEMS.clear()  # what this test provoked on purpose; anything else still fails it
    assert any("Content Security Policy" in p and "style" in p for p in caught), caught
    assert any("page error" in p and "boom from a test" in p for p in caught), caught

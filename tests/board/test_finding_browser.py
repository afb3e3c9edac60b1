"""Finding todos in a real browser: more filters swap the list and stay in the URL, the export
link and the saved view follow them, a saved view opens from the list's menu, and the search
reaches what attempts said. The ``page`` fixture (test_browser.py) fails a test on any console
error or CSP violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import search, sign_in
from tests.board.test_filters import dead_with
from tests.support.board import make

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page

ROWS = "#todo-rows tr.todo-row"


def test_filter_save_a_view_and_open_it(world, page):
    make(world, "pending", title="Quarterly report", kind="report", priority=5)
    make(world, "done", title="Monthly report", kind="report", priority=1)
    make(world, "pending", title="Resize avatar", kind="resize", priority=5)
    dead_with(world, "Upstream said: quota exceeded for tenant 42", title="Sync contacts")
    sign_in(page, "alice")
    expect(page.locator(ROWS)).to_have_count(4)

    # more filters: kind, then a priority range; each swaps the list and lands in the URL
    page.locator("details.more-filters > summary").click()
    page.fill("#f-kind", "report")
    page.press("#f-kind", "Enter")
    page.wait_for_url(re.compile(r"kind=report"))
    expect(page.locator(ROWS)).to_have_count(2)
    page.fill("#f-priority", "3..10")
    page.press("#f-priority", "Enter")
    page.wait_for_url(re.compile(r"kind=report&priority=3..10"))
    expect(page.locator(ROWS)).to_have_count(1)
    expect(page.locator("#todo-rows")).to_contain_text("Quarterly report")
    # the export link carries the filter the list now shows
    expect(page.locator("#export-csv")).to_have_attribute("href", "/todos/export.csv?kind=report&priority=3..10")

    # a bad value is named on the page, and the list is not filtered by it
    page.fill("#f-priority", "lots")
    page.press("#f-priority", "Enter")
    expect(page.locator("#todo-list .notice-error")).to_contain_text("priority: must be a whole number")
    expect(page.locator(ROWS)).to_have_count(2)
    page.fill("#f-priority", "3..10")
    page.press("#f-priority", "Enter")
    expect(page.locator(ROWS)).to_have_count(1)

    # save it from the menu: the view opens, and the menu lists it
    page.locator("#views-menu > summary").click()
    page.fill("#view-name", "Urgent reports")
    page.locator("#views-menu button[type=submit]").click()
    page.wait_for_url(re.compile(r"/todos/\?kind=report&priority=3..10$"))
    expect(page.locator("#toasts")).to_contain_text("Saved the view “Urgent reports”.")

    # back to everything, then open the view from the menu
    page.goto("/todos/")
    expect(page.locator(ROWS)).to_have_count(4)
    page.locator("#views-menu > summary").click()
    page.locator("#views-menu a[data-saved-view]", has_text="Urgent reports").click()
    page.wait_for_url(re.compile(r"kind=report&priority=3..10"))
    expect(page.locator(ROWS)).to_have_count(1)
    expect(page.locator("#f-kind")).to_have_value("report")

    # rename it on the views page
    page.goto("/todos/views/")
    page.locator("input[id^=rename-]").fill("Reports to do")
    page.get_by_role("button", name="Rename").click()
    expect(page.locator("#toasts")).to_contain_text("Renamed the view to “Reports to do”.")
    expect(page.locator(".saved-views-table")).to_contain_text("Reports to do")

    # and the search finds what an attempt said
    page.goto("/todos/")
    search(page, "quota exceeded", 1)
    expect(page.locator("#todo-rows")).to_contain_text("Sync contacts")


def test_on_a_phone_the_open_views_menu_stays_on_screen(world, browser, asgi_server):
    make(world, "pending", title="One todo")
    context = browser.new_context(base_url=asgi_server.url, viewport={"width": 390, "height": 844}, has_touch=True)
    phone = context.new_page()
    phone.problems = base.watch(phone)
    try:
        sign_in(phone, "alice")
        phone.locator("#views-menu > summary").click()
        expect(phone.locator("#view-name")).to_be_visible()
        box = phone.locator(".views-menu-panel").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
    assert phone.problems == [], phone.problems

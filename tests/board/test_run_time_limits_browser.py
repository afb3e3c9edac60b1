"""Run-time limits in a real browser: a team admin sets a queue's default from the overview (the
table swaps in place), and the drawer of a claimed todo counts down the time left before its limit.

The ``page`` fixture (``test_browser.py``) fails a test on any console error or CSP violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.support.board import make
from todos.core.db import connect

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def test_an_admin_sets_a_queues_default_on_the_overview_and_the_drawer_counts_down(world, page):
    make(world, "pending", title="Some email work", queue="email")
    limited = make(world, "claimed", title="A todo with a limit", timeout_seconds=600)
    sign_in(page, "adam")
    page.goto("/")
    row = page.locator("#overview-table tr", has=page.locator(".queue-name", has_text="email"))
    expect(row.locator(".col-timeout")).to_contain_text("none")
    row.locator('input[name="timeout_seconds"]').fill("900")
    row.get_by_role("button", name="Set").click()
    row = page.locator("#overview-table tr", has=page.locator(".queue-name", has_text="email"))
    expect(row.locator(".col-timeout")).to_contain_text("15m 00s")
    with connect() as conn:
        stored = conn.execute("SELECT queue, timeout_seconds FROM queue_settings").fetchall()
    assert [(r["queue"], r["timeout_seconds"]) for r in stored] == [("email", 900)]

    page.goto(f"/todos/{limited.id}/")
    limit = page.locator(".lease-card .run-time-limit")
    expect(limit).to_contain_text("10m 00s")
    countdown = limit.locator("time.countdown")
    expect(countdown).to_contain_text("in 9m")

"""The state tabs under a filter on the todos' own columns, in a real browser: past 1,000 matches
the "All" tab says "1,000+" and the states "n+"; below it the counts are exact. The ``page``
fixture fails a test on any console error."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.board.test_bulk import insert_dead_letters
from tests.support.board import make

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def test_filtered_tabs_say_1000_plus_past_the_walk_and_exact_counts_below_it(world, page):
    insert_dead_letters(world.acme_ep.id, 1_200)
    make(world, "pending", kind="deploy")
    make(world, "done", kind="deploy")
    sign_in(page, "alice")
    today = datetime.now(UTC).date()
    days = f"created_from={today - timedelta(days=1)}&created_to={today + timedelta(days=1)}"
    page.goto(f"/todos/?{days}")
    expect(page.locator('[data-count="all"]')).to_have_text("1,000+")
    expect(page.locator('[data-count="dead"]')).to_have_text(re.compile(r"^[0-9,]+\+$"))
    expect(page.locator(".counts-note")).to_have_text("Counted over the first 1,000 matches")
    page.goto("/todos/?kind=deploy")
    expect(page.locator('[data-count="all"]')).to_have_text("2")
    expect(page.locator('[data-count="pending"]')).to_have_text("1")
    expect(page.locator('[data-count="done"]')).to_have_text("1")
    expect(page.locator('[data-count="dead"]')).to_have_text("0")

"""The overview's throttled rate key in a real browser: its "next" allowance counts down by itself,
second by second, between the server's renders, and once it comes the row says so (nothing is
written when a key refills, so the countdown itself asks for the region again).

The ``page`` fixture (``test_browser.py``) fails a test on any console error or CSP violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.store import rate_limits

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def seconds_left(text: str) -> int:
    found = re.fullmatch(r"in (?:(\d+)m )?(\d+)s", text.strip())
    assert found, text
    return int(found.group(1) or 0) * 60 + int(found.group(2))


@pytest.mark.parametrize("per", ["minute", "hour"])
def test_the_next_allowance_of_a_throttled_key_counts_down(world, page, per):
    execute(rate_limits.set_limit(None, world.acme.id, "api:upstream", 1, per))
    make(world, "claimed", title="Took the allowance", rate_key="api:upstream")
    make(world, "pending", title="Waits for the rate limit", rate_key="api:upstream")
    sign_in(page, "alice")
    page.goto("/")
    countdown = page.locator('tr[data-rate-key="api:upstream"] time.countdown')
    expect(countdown).to_have_text(re.compile(r"^in (\d+m )?\d+s$"))
    first = seconds_left(countdown.inner_text())
    # the server rendered the text; only the page's countdown can change it before the next render
    expect(countdown).not_to_have_text(countdown.inner_text(), timeout=3000)
    later = seconds_left(countdown.inner_text())
    assert 0 <= later < first


def test_when_the_allowance_comes_the_row_says_available_now(world, page):
    execute(rate_limits.set_limit(None, world.acme.id, "api:upstream", 1, "hour"))
    make(world, "claimed", title="Took the allowance", rate_key="api:upstream")
    make(world, "pending", title="Waits for the rate limit", rate_key="api:upstream")
    sign_in(page, "alice")
    with connect() as conn:  # a fixture shortcut: the hour's oldest claim leaves the window soon
        conn.execute("UPDATE rate_limits SET refills_at = now() + interval '3 seconds'")
    page.goto("/")
    row = page.locator('tr[data-rate-key="api:upstream"]')
    expect(row.locator("time.countdown")).to_have_text(re.compile(r"^in \ds$"))
    expect(row).to_contain_text("available now", timeout=8000)
    expect(row).not_to_contain_text("lapsed")

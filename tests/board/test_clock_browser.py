"""One clock in a real browser: the header's zone switch re-renders every time on the page in the
chosen zone (the server renders them; no script rewrites them), and "my browser's zone" is the
zone the browser itself runs in (Chromium told a zone through Playwright's ``timezone_id``),
even when the browser has moved since the Board last heard from it.

The ``zoned`` fixture fails a test on any console error, CSP violation, uncaught exception or
native dialog, as ``test_browser.py``'s ``page`` does."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.store import human

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser

BROWSER_ZONE = "Asia/Tokyo"  # where the test's Chromium believes it is


@pytest.fixture
def zoned(browser, asgi_server):
    context = browser.new_context(
        base_url=asgi_server.url, viewport={"width": 1440, "height": 900}, timezone_id=BROWSER_ZONE
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.problems = base.watch(page)
    yield page
    context.close()
    assert page.problems == [], page.problems


def first_time(page):
    return page.locator("#main time[datetime]").first


def choose(page, kind: str, named: str = "") -> None:
    page.locator("details.zonemenu summary").click()
    page.locator(f'.zone-form input[name="zone_kind"][value="{kind}"]').check()
    if named:
        page.fill("#named-zone", named)
    page.locator(".zone-form button[type=submit]").click()


def stored_zone(user) -> str | None:
    with connect() as conn:
        row = conn.execute("SELECT time_zone FROM person_preferences WHERE user_id = %s", (user.pk,)).fetchone()
    return row["time_zone"] if row else None


def test_the_switch_re_renders_every_time_in_the_chosen_zone(world, zoned):
    page = zoned
    todo = make(world, "pending", title="zoned work")
    execute(human.set_priority(world.alice, todo.id, 7))  # an audited action: Activity lists its time
    sign_in(page, "alice")
    page.goto("/activity/")
    # nobody chose: UTC, written by the server, and left alone by the browser (in Tokyo)
    expect(page.locator("[data-zone-shown]")).to_have_text("UTC")
    expect(first_time(page)).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))

    choose(page, "named", "America/New_York")
    expect(page.locator("[data-zone-shown]")).to_have_text("America/New_York")
    assert page.url.endswith("/activity/")  # back where the switch was used
    expect(first_time(page)).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d E[SD]T$"))
    expect(first_time(page)).to_have_attribute("title", re.compile(r"-0[45]:00 America/New_York$"))
    expect(page.locator("#toasts")).to_contain_text("Times are now shown in America/New_York.")
    assert stored_zone(world.alice_user) == "America/New_York"

    choose(page, "browser")
    expect(page.locator("[data-zone-shown]")).to_have_text(BROWSER_ZONE)
    expect(first_time(page)).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d JST$"))
    expect(first_time(page)).to_have_attribute("datetime", re.compile(r"\+09:00$"))
    assert stored_zone(world.alice_user) == "browser"

    # a bad name is refused by field, and the page stays in the zone it was in
    choose(page, "named", "Mars/Olympus")
    expect(page.locator("#toasts .toast-error")).to_contain_text("named_zone: 'Mars/Olympus' is not a time zone")
    expect(first_time(page)).to_have_text(re.compile(r"JST$"))
    assert stored_zone(world.alice_user) == "browser"

    # the drawer, fetched by htmx as live updates fetch it, is in the same zone
    page.goto(f"/todos/?open={todo.id}")
    drawer = page.locator(f'#drawer[data-todo-id="{todo.id}"]')
    expect(drawer.locator("time[datetime]:not([data-format]):not(.countdown)").first).to_have_text(re.compile(r"JST$"))
    expect(drawer.locator('time[data-format="age"]').first).to_have_attribute("title", re.compile(r"Asia/Tokyo$"))
    expect(drawer).to_contain_text(f"Run at ({BROWSER_ZONE}; empty: now)")


def test_the_browsers_zone_follows_the_browser_when_it_moves(world, zoned, asgi_server):
    page = zoned
    todo = make(world, "pending", title="travelling")
    execute(human.set_priority(world.alice, todo.id, 3))
    with connect() as conn:
        conn.execute(
            "INSERT INTO person_preferences (user_id, time_zone) VALUES (%s, 'browser')", (world.alice_user.pk,)
        )
    sign_in(page, "alice")
    # the browser last reported Paris (say, yesterday); now it runs in Tokyo: the page it gets
    # first is in Paris, and board.js tells the server and loads it again, once, in Tokyo
    page.context.add_cookies([{"name": "board_browser_zone", "value": "Europe/Paris", "url": asgi_server.url}])
    page.goto("/activity/")
    expect(page.locator("[data-zone-shown]")).to_have_text(BROWSER_ZONE)
    expect(first_time(page)).to_have_text(re.compile(r"JST$"))
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    assert cookies["board_browser_zone"] == BROWSER_ZONE

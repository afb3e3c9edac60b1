"""The Board on a phone: at 390×844 no page is wider than the screen, the navigation
folds behind a Menu button that opens by mouse and by keyboard, an opened todo fills the screen
(not 2,700 px below the list) and closing it returns to the list, and a row's title keeps a
readable width.

Screenshots go to ``test-artifacts/phone-*.png`` (their paths are printed); they are evidence,
the assertions are the test. The ``page`` fixture (``test_browser.py``) fails a test on any
console error, CSP violation, uncaught exception or native dialog."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.board import test_browser as base
from tests.board.test_axe_browser import AXE, AXE_PATH, readable, violations
from tests.board.test_browser import ARTIFACTS, sign_in
from tests.support.board import make
from tests.support.live_server import database_url, start_server, stop_server

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser

PHONE = {"width": 390, "height": 844}
LONG_TITLE = "Send the quarterly invoice reminder to every customer of the northern region"


@pytest.fixture
def phone(browser, asgi_server):
    context = browser.new_context(base_url=asgi_server.url, viewport=PHONE, color_scheme="light", has_touch=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.problems = base.watch(page)
    yield page
    context.close()
    assert page.problems == [], page.problems


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"phone-{name}.png"
    page.screenshot(path=str(path), full_page=False)
    print(f"screenshot: {path}")


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


@pytest.fixture
def sue(world):
    """A site admin who is also an admin of acme: every page of the Board has something on it."""
    user = factories.user("sue", superuser=True)
    factories.member(world.acme, user, "admin")
    return user


PAGES = (
    ("overview", "/"),
    ("todos", "/todos/"),
    ("todos-dead", "/todos/?state=dead"),
    ("dead-letters", "/todos/dead-letters/"),
    ("new-todo", "/todos/new/"),
    ("charts", "/charts/"),
    ("schedules", "/schedules/"),
    ("agents", "/agents/"),
    ("endpoints", "/endpoints/"),
    ("vend", "/endpoints/new/"),
    ("activity", "/activity/"),
    ("teams", "/teams/"),
    ("team", "/teams/acme/"),
    ("people", "/people/"),
    ("password", "/accounts/password_change/"),
)


def test_no_page_is_wider_than_a_phone(world, sue, phone):
    for state in ("pending", "claimed", "retry", "dead", "done", "mine"):
        make(world, state, title=f"{LONG_TITLE} ({state})")
    detail = make(world, "dead", title=LONG_TITLE)
    phone.goto("/accounts/login/")
    assert page_width(phone) <= PHONE["width"]
    shot(phone, "login")
    sign_in(phone, "sue")
    widths = {}
    for name, path in (*PAGES, ("todo-page", f"/todos/{detail.id}/")):
        phone.goto(path)
        phone.locator("main").wait_for()
        widths[name] = page_width(phone)
        # the header fits: its last control (the user menu) ends on screen
        user_menu = box(phone.locator(".usermenu summary"))
        assert user_menu["x"] + user_menu["width"] <= PHONE["width"], name
        shot(phone, name)
    too_wide = {name: width for name, width in widths.items() if width > PHONE["width"]}
    assert too_wide == {}, f"pages wider than {PHONE['width']} px: {too_wide}"


@pytest.fixture
def replica_note_server(django_db_setup):
    """A Board whose "read replica" is the primary itself: not a standby, so every page says its
    reads came from the primary (``todos/core/replica.py``, ``status_note``) — the note shown for real,
    and at once (no replica to wait for)."""
    server = start_server(BOARD_READ_REPLICA_URL=database_url())
    try:
        yield server
    finally:
        stop_server(server)


@pytest.mark.parametrize("width", [1440, 1439, 1181, 1180, 800, 600, 480, 390])
def test_the_read_replica_note_never_pushes_the_header_off_screen(world, sue, browser, replica_note_server, width):
    context = browser.new_context(base_url=replica_note_server.url, viewport={"width": width, "height": 844})
    context.route(f"**{AXE_PATH}", lambda route: route.fulfill(path=str(AXE), content_type="text/javascript"))
    page = context.new_page()
    page.problems = base.watch(page)
    make(world, "pending", title=LONG_TITLE)
    try:  # closed before the server stops, even when an assertion fails
        sign_in(page, "sue")  # a site admin: the longest navigation
        full = "reads from primary: replica is not a standby"
        note = page.locator("#read-replica-note")
        expect(note).to_be_visible()
        expect(note).to_have_attribute("title", re.compile(re.escape(full)))
        expect(note.locator(".replica-note-full")).to_have_text(full)  # what a screen reader reads
        short = width < 1440
        expect(note.locator(".replica-note-short")).to_be_visible(visible=short)
        if not short:
            expect(note.locator(".replica-note-full")).to_be_in_viewport(ratio=1)
        assert page_width(page) <= width
        shown = box(note)
        summary = box(page.locator(".usermenu summary"))
        assert shown["x"] >= 0 and shown["x"] + shown["width"] <= box(page.locator("[data-theme-toggle]"))["x"]
        assert summary["x"] + summary["width"] <= width
        assert shown["height"] <= 48, "the note wraps"
        if not page.locator("[data-nav-toggle]").is_visible():
            last = box(page.locator("#mainnav a").last)
            assert last["x"] + last["width"] <= shown["x"], "the navigation runs into the note"
        shot(page, f"replica-note-{width}")
        found = {}
        for scheme in ("light", "dark"):  # the note's colour reads in both themes
            page.emulate_media(color_scheme=scheme)
            if result := violations(page):
                found[f"{scheme} {width}"] = result
        assert found == {}, "axe found violations:\n" + readable(found)
    finally:
        context.close()
    assert page.problems == [], page.problems


def test_the_menu_button_opens_the_navigation_by_tap_and_by_keyboard(world, phone):
    sign_in(phone, "alice")
    button = phone.locator("[data-nav-toggle]")
    nav = phone.locator("#mainnav")
    expect(button).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    expect(phone.locator("#live-status")).to_be_in_viewport()
    button.tap()
    expect(button).to_have_attribute("aria-expanded", "true")
    for label in ("Overview", "Todos", "Charts", "Schedules", "Agents", "Endpoints", "Activity", "Teams"):
        link = nav.get_by_role("link", name=label, exact=True)
        expect(link).to_be_visible()
        expect(link).to_be_in_viewport(ratio=1)
    shot(phone, "menu-open")
    nav.get_by_role("link", name="Activity", exact=True).tap()
    phone.wait_for_url(re.compile(r"/activity/$"))
    expect(nav).to_be_hidden()  # a new page starts with the menu folded

    # the keyboard: Tab reaches the button, Enter opens, Escape folds and gives the focus back
    phone.locator("main").focus()
    button.focus()
    phone.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "true")
    phone.keyboard.press("Tab")
    expect(nav.get_by_role("link", name="Overview", exact=True)).to_be_focused()
    phone.keyboard.press("Escape")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    expect(button).to_be_focused()
    # a tap elsewhere folds it too
    button.tap()
    expect(nav).to_be_visible()
    phone.touchscreen.tap(PHONE["width"] // 2, PHONE["height"] - 40)  # below the open menu
    expect(nav).to_be_hidden()

    # sign-out stays reachable: the user menu is on screen and opens to it
    phone.locator(".usermenu summary").tap()
    sign_out = phone.get_by_role("button", name="Sign out")
    expect(sign_out).to_be_in_viewport(ratio=1)
    shot(phone, "user-menu-open")
    sign_out.tap()
    phone.wait_for_url(re.compile(r"/accounts/login/"))


def test_a_todo_opens_as_a_full_screen_sheet_and_closing_returns_to_the_list(world, phone):
    todos = [make(world, "pending", title=f"{LONG_TITLE} #{n}") for n in range(40)]
    target = todos[0]  # the oldest: the list's last row, far below the fold
    sign_in(phone, "alice")
    row = phone.locator(f"#todo-{target.id}")
    row.scroll_into_view_if_needed()
    title_cell = box(row.locator(".col-title"))
    assert title_cell["width"] >= 250, f"the title cell is {title_cell['width']} px wide"
    title_text = box(row.locator(".title-text"))
    assert title_text["width"] >= 250, f"the title shows in {title_text['width']} px"
    assert box(row)["x"] + box(row)["width"] <= PHONE["width"]
    shot(phone, "list")
    scrolled = phone.evaluate("window.scrollY")
    assert scrolled > 1000, "the row is far down the list"

    row.locator("a.todo-link").tap()
    drawer = phone.locator(f'#drawer[data-todo-id="{target.id}"]')
    expect(drawer).to_be_in_viewport(ratio=0.99)
    sheet = box(drawer)
    assert (sheet["x"], sheet["y"]) == (0, 0), sheet
    assert sheet["width"] >= PHONE["width"] - 1 and sheet["height"] >= PHONE["height"] - 1, sheet
    expect(drawer.locator("#drawer-title")).to_be_in_viewport(ratio=1)
    expect(drawer.locator("#drawer-title")).to_have_text(f"{LONG_TITLE} #0")
    close = drawer.get_by_role("link", name="Close the drawer")
    expect(close).to_be_in_viewport(ratio=1)
    assert page_width(phone) <= PHONE["width"]
    # what the sheet covers takes no focus: Tab stays in the drawer
    expect(phone.locator(".todos-main")).to_have_js_property("inert", True)
    for _ in range(4):
        phone.keyboard.press("Tab")
        assert phone.evaluate("!!document.activeElement.closest('#drawer')")
    shot(phone, "drawer")

    close.tap()
    expect(phone.locator("#drawer[data-todo-id]")).to_have_count(0)
    expect(phone.locator(".todos-main")).to_have_js_property("inert", False)
    expect(row).to_be_in_viewport()  # back where the list was, the row in view
    assert "open=" not in phone.url

    # back closes the sheet too (its URL is in the history)
    row.locator("a.todo-link").tap()
    expect(drawer).to_be_in_viewport(ratio=0.99)
    phone.go_back()
    expect(phone.locator("#drawer[data-todo-id]")).to_have_count(0)
    expect(row).to_be_in_viewport()


@pytest.mark.parametrize("width", [1181, 1180, 1100, 800, 600, 480])
def test_between_a_phone_and_a_desktop_the_header_fits_and_an_opened_todo_is_in_view(world, sue, phone, width):
    todos = [make(world, "pending", title=f"{LONG_TITLE} #{n}") for n in range(30)]
    phone.set_viewport_size({"width": width, "height": 800})
    sign_in(phone, "sue")  # a site admin: the longest navigation (People too)
    assert page_width(phone) <= width
    summary = box(phone.locator(".usermenu summary"))
    assert summary["x"] + summary["width"] <= width
    folded = phone.locator("[data-nav-toggle]").is_visible()
    assert folded == (width <= 1180)
    if not folded:
        last = box(phone.locator("#mainnav a").last)
        assert last["x"] + last["width"] <= summary["x"], "the navigation runs into the user menu"
    row = phone.locator(f"#todo-{todos[0].id}")
    row.scroll_into_view_if_needed()
    assert box(row.locator(".title-text"))["width"] >= 180
    row.locator("a.todo-link").click()
    drawer = phone.locator(f'#drawer[data-todo-id="{todos[0].id}"]')
    expect(drawer).to_be_in_viewport(ratio=0.99)
    expect(drawer.get_by_role("link", name="Close the drawer")).to_be_in_viewport(ratio=1)
    shot(phone, f"drawer-{width}")


def test_without_javascript_the_navigation_wraps_on_a_phone(world, browser, asgi_server):
    context = browser.new_context(base_url=asgi_server.url, viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, "alice")
    page.goto("/")
    expect(page.locator("[data-nav-toggle]")).to_be_hidden()  # a button that could do nothing
    for link in page.locator("#mainnav a").all():
        expect(link).to_be_in_viewport(ratio=1)
    assert page_width(page) <= PHONE["width"]
    shot(page, "no-javascript")
    context.close()

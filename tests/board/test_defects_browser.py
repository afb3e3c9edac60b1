"""Defects a new user met on the Board that only a browser can tell: the schedule preview that
updated once, the title column squeezed by an open drawer, the overview at 390 px with a busy
concurrency key, People's confirmations, a retried group that kept its count, toasts over the
drawer, the concurrency key's glyph, and tables, row actions, first screen and tap targets on a
phone.

The ``page`` fixture (``test_browser.py``) fails a test on any console error (htmx's
``targetError`` included), CSP violation, uncaught exception or native dialog."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.board import test_browser as base
from tests.board.test_browser import ARTIFACTS, sign_in
from tests.support.board import make
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.ops import bulk

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page

PHONE = {"width": 390, "height": 844}
WIDTHS = (390, 800, 1440)
LONG_TITLE = "Send the quarterly invoice reminder to every customer of the northern region"


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"defects-{name}.png"
    page.screenshot(path=str(path), full_page=False)
    print(f"screenshot: {path}")


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def overlaps(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.fixture
def sized(browser, asgi_server):
    """A page of a given viewport width (height 844), touch on, watched like ``page``."""
    opened = []

    def open_at(width: int, height: int = 844):
        context = browser.new_context(
            base_url=asgi_server.url, viewport={"width": width, "height": height}, color_scheme="light", has_touch=True
        )
        new = context.new_page()
        new.set_default_timeout(10_000)
        new.problems = base.watch(new)
        opened.append((context, new))
        return new

    yield open_at
    for context, new in opened:
        context.close()
        assert new.problems == [], new.problems


# --- 1: the schedule preview -----------------------------------------------------------------


def test_the_schedule_preview_follows_every_edit(world, page):
    sign_in(page, "alice")
    page.goto("/schedules/")
    preview = page.locator("#sch-preview")
    cron = page.locator("#sch-cron")
    zone = page.locator("#sch-tz")
    cron.fill("30 8 * * *")
    expect(preview).to_contain_text("08:30")
    cron.fill("15 9 * * *")  # the second edit: the element the first swap left must be the target
    expect(preview).to_contain_text("09:15")
    cron.fill("99 * * * *")
    expect(preview.locator(".form-error")).to_contain_text("cron: does not parse")
    cron.fill("0 6 * * *")
    expect(preview).to_contain_text("06:00")
    zone.fill("Mars/Olympus")
    expect(preview.locator(".form-error")).to_contain_text("timezone:")
    zone.fill("Asia/Tokyo")
    expect(preview).to_contain_text("cron read in Asia/Tokyo")
    expect(page.locator("#sch-preview")).to_have_count(1)


# --- 2: the list beside an open drawer ---------------------------------------------------------


def test_an_open_drawer_leaves_the_title_readable_at_1440(world, page):
    todos = [
        make(world, "claimed", title=f"{LONG_TITLE} #{n}", concurrency_key=f"deploy:{n}", kind="email.send", priority=3)
        for n in range(3)
    ]
    todos += [make(world, "retry", title=f"{LONG_TITLE} retry {n}") for n in range(3)]
    sign_in(page, "alice")
    row = page.locator(f"#todo-{todos[0].id}")
    closed_height = box(row)["height"]
    row.locator("a.todo-link").click()
    expect(page.locator(f'#drawer[data-todo-id="{todos[0].id}"]')).to_be_visible()
    shot(page, "drawer-1440")
    for todo in todos:
        cells = page.locator(f"#todo-{todo.id}")
        title = box(cells.locator(".title-text"))
        assert title["width"] >= 180, f"the title shows in {title['width']} px"
        assert box(cells)["height"] <= max(closed_height * 1.5, 60), (box(cells)["height"], closed_height)
    assert page_width(page) <= 1440


# --- 3 and 10: the overview with a busy key, the key's icon ----------------------------------------


def busy_key(world) -> None:
    make(world, "pending", title="deploy the northern region's billing service", concurrency_key="deploy:prod")
    make(world, "pending", title="deploy the southern region's billing service", concurrency_key="deploy:prod")
    execute(agent_store.claim_next(world.agent))
    factories.relayed()


def test_the_overview_with_a_busy_key_fits_a_phone(world, sized):
    busy_key(world)
    phone = sized(390)
    sign_in(phone, "alice")
    phone.goto("/")
    table = phone.locator(".busy-keys-table")
    expect(table).to_be_visible()
    shot(phone, "overview-busy-key")
    assert page_width(phone) <= PHONE["width"]
    assert phone.evaluate("window.visualViewport.scale") == 1
    waiting = table.locator("tbody tr td").nth(2)
    next_in_line = box(waiting)
    assert next_in_line["width"] >= 150, f"'Next in line' is {next_in_line['width']} px wide"
    line = phone.evaluate("parseFloat(getComputedStyle(document.querySelector('.busy-keys-table td')).lineHeight)")
    assert next_in_line["height"] <= 6 * line + 20, "Next in line wraps every few letters"


def test_the_concurrency_key_icon_is_drawn_not_a_font_glyph(world, page):
    busy_key(world)
    sign_in(page, "alice")
    for path in ("/todos/", "/"):
        page.goto(path)
        tag = page.locator(".tag-key").first
        expect(tag).to_be_visible()
        assert "\u26bf" not in page.locator("main").inner_text()
        icon = tag.locator("svg.icon-key")
        assert box(icon)["width"] >= 8 and box(icon)["height"] >= 8
        expect(icon).to_have_attribute("aria-hidden", "true")
        expect(tag).to_have_attribute("title", re.compile("^Concurrency key"))
        assert tag.locator(".visually-hidden").inner_text().startswith("Concurrency key")


# --- 4: People asks first ----------------------------------------------------------------------------


def test_people_reset_and_deactivate_ask_before_they_act(world, page):
    factories.user("sue", superuser=True)
    sign_in(page, "sue")
    page.goto("/people/")
    row = page.locator(f"#person-{world.alice_user.id}")
    row.get_by_role("link", name="Deactivate…").click()
    expect(page.locator("h1")).to_have_text("Deactivate alice?")
    page.get_by_role("link", name="Cancel").click()
    expect(page.locator(f"#person-{world.alice_user.id}")).to_contain_text("active")
    expect(page.locator(f"#person-{world.alice_user.id} .tag-running")).to_have_text("active")
    page.locator(f"#person-{world.alice_user.id}").get_by_role("link", name="Reset password…").click()
    expect(page.locator("h1")).to_have_text("Reset the password of alice?")
    page.get_by_role("button", name="Reset password").click()
    expect(page.locator("#temp-password")).to_be_visible()
    page.goto("/people/")
    page.locator(f"#person-{world.alice_user.id}").get_by_role("link", name="Deactivate…").click()
    page.get_by_role("button", name="Deactivate").click()
    expect(page.locator(f"#person-{world.alice_user.id}")).to_contain_text("deactivated")


# --- 5: a retried group goes --------------------------------------------------------------------------


def test_a_retried_group_leaves_the_page_when_the_job_finishes(world, page):
    for n in range(3):
        make(world, "dead", title=f"dead letter {n}")
    sign_in(page, "alice")
    page.goto("/todos/dead-letters/")
    groups = page.locator(".groups-table tbody tr")
    expect(groups).to_have_count(1)
    expect(groups.first.locator("td.num")).to_have_text("3")
    groups.first.get_by_role("button", name="Retry group…").click()
    page.locator("#bulk-panel .bulk-preview").get_by_role("button", name=re.compile("^Retry 3")).click()
    expect(page.locator("#bulk-panel .bulk-job")).to_be_visible()
    bulk.work_until_idle(60)  # the background loop's work, done here
    expect(page.locator("#bulk-panel .bulk-job[data-state=done]")).to_be_visible()
    expect(page.locator(".groups-table")).to_have_count(0)
    expect(page.locator("#dead-letter-groups .empty-note")).to_contain_text("No dead letters here")


# --- 9: toasts and the drawer ------------------------------------------------------------------------


def test_success_toasts_stay_off_the_drawers_attempt_history(world, page):
    todo = make(world, "mine", title="Held by me for a while")
    sign_in(page, "alice")
    page.click(f"#todo-{todo.id} a.todo-link")
    drawer = page.locator(f'#drawer[data-todo-id="{todo.id}"]')
    expect(drawer).to_be_visible()
    for _ in range(3):
        drawer.get_by_role("button", name="Extend", exact=True).click()
        expect(page.locator("#toasts .toast-success").last).to_contain_text("Extended")
    shot(page, "toasts-drawer")
    expect(page.locator("#toasts .toast-success")).to_have_count(1)  # a newer success replaces the last
    drawn = box(drawer)
    for toast in page.locator("#toasts [data-toast]").all():
        assert not overlaps(box(toast), drawn), (box(toast), drawn)


# --- 14: phones --------------------------------------------------------------------------------------


CONTROLS = (
    "main a.button, main button, main input:not([type=hidden]), main select, main textarea, main summary, "
    "main .todo-link, main .tab, header button, header summary, header a.brand"
)


def small_controls(page, width: int) -> list[str]:
    """Controls under 24 px either way. Above 800 px a check box may be 18 px: its margin keeps a
    24 px circle on it clear of every other target (WCAG 2.5.8's spacing exception)."""
    return page.evaluate(
        """([selector, wide]) => Array.from(document.querySelectorAll(selector))
            .filter(el => el.offsetParent !== null && !el.closest('.visually-hidden, [hidden], dialog:not([open])')
                    && !(el.closest('details:not([open])') && !el.closest('summary')))
            .map(el => [el, el.getBoundingClientRect()])
            .filter(([el, r]) => {
              const least = wide && (el.type === 'checkbox' || el.type === 'radio') ? 18 : 24;
              return r.width > 0 && (r.width < least || r.height < least);
            })
            .map(([el, r]) => `${el.tagName.toLowerCase()}.${el.className} `
              + `"${(el.textContent || el.value || '').trim().slice(0, 30)}" `
              + `${Math.round(r.width)}x${Math.round(r.height)}`)""",
        [CONTROLS, width > 800],
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_tap_targets_are_at_least_24_px(world, sized, width):
    for state in ("pending", "claimed", "retry", "dead", "mine"):
        make(world, state, title=f"{LONG_TITLE} ({state})")
    phone = sized(width)
    sign_in(phone, "alice")
    found = {}
    paths = ("/", "/todos/", "/todos/?state=dead", "/todos/dead-letters/", "/schedules/", "/endpoints/", "/activity/")
    for path in paths:
        phone.goto(path)
        phone.locator("main").wait_for()
        if small := small_controls(phone, width):
            found[path] = small
    assert found == {}, found


@pytest.mark.parametrize("width", WIDTHS)
def test_a_table_shows_it_scrolls_only_while_it_overflows_and_its_actions_stay_on_screen(world, sized, width):
    factories.endpoint(world.acme, slug="acme-producer-with-a-long-name", queues=("default", "email", "reports"))
    adam = sized(width)
    sign_in(adam, "adam")
    adam.goto("/endpoints/")
    wrap = adam.locator(".table-wrap").first
    expect(wrap).to_be_visible()
    overflowing = wrap.evaluate("el => el.scrollWidth > el.clientWidth + 1")
    expect(wrap).to_have_attribute("data-overflow", "true" if overflowing else "false")
    if width == 390:
        assert overflowing, "the endpoints table is wider than a phone"
    if overflowing:
        sign = wrap.evaluate("el => getComputedStyle(el, '::after').content")
        assert sign not in ("none", "normal", ""), sign
        # the row's actions are pinned at the right edge, on screen before any scrolling
        action = adam.locator(".endpoints-table tbody tr").first.locator(".col-actions a").first
        expect(action).to_be_in_viewport(ratio=1)
        shot(adam, f"table-overflow-{width}")
    else:
        assert wrap.evaluate("el => getComputedStyle(el, '::after').content") in ("none", "normal", "")
    assert page_width(adam) <= width


def test_the_first_phone_screen_of_todos_holds_rows(world, sized):
    for n in range(12):
        make(world, "pending", title=f"{LONG_TITLE} #{n}")
    phone = sized(390)
    sign_in(phone, "alice")
    shot(phone, "todos-first-screen")
    rows = phone.locator("#todo-rows tr.todo-row")
    shown = [r for r in rows.all()[:8] if box(r)["y"] + box(r)["height"] <= PHONE["height"]]
    assert len(shown) >= 4, f"{len(shown)} rows on the first {PHONE['height']} px"

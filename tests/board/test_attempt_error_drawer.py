"""The drawer shows why each attempt failed: the newest error unfolded, with its traceback in a
scrollable, keyboard-focusable ``<pre>``; older attempts' errors folded a click away; "cut" when
Board cut the report; hostile text inert."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_axe_browser import AXE, axe_page, readable, scheme, screen, violations  # noqa: F401
from tests.board.test_browser import sign_in
from tests.board.test_xss import EVIL, SCRIPT, assert_inert
from tests.store.helpers import make_due
from todos.core.db import execute
from todos.core.store import agent as agent_store

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page

LONG_LINE = "x" * 3000
OLDER = {"type": "requests.ConnectTimeout", "message": "connect timed out\nafter 30 s", "traceback": "older frame"}
NEWEST = {
    "type": "builtins.KeyError",
    "message": f"'user' {SCRIPT}",
    "traceback": f"Traceback (most recent call last):\n  {LONG_LINE}\n{EVIL}\n" + "frame\n" * 400 + "KeyError: 'user'",
}


def failed_twice(world, *, newest=NEWEST) -> str:
    """A todo whose two attempts failed, each with an error object; a third attempt left."""
    todo = execute(agent_store.create(world.agent, queue="default", title="Fails twice", max_attempts=3)).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.fail(world.agent, todo.id, summary="older", error=OLDER))
    make_due(todo.id)
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.fail(world.agent, todo.id, summary="newest", error=newest))
    return todo.id


@pytest.mark.usefixtures("store_db")
def test_the_drawer_escapes_every_part_of_an_error(world, alice_client):
    todo_id = failed_twice(world, newest={"type": EVIL, "message": EVIL, "traceback": EVIL})
    drawer = alice_client.get(reverse("todo_drawer", args=[todo_id])).content.decode()
    assert_inert(drawer)
    assert drawer.count('class="attempt-error"') == 2


@pytest.mark.usefixtures("store_db")
def test_the_drawer_says_cut_only_when_board_cut_the_report(world, alice_client):
    todo_id = failed_twice(world, newest={"type": "Huge", "traceback": "t" * 70_000})
    drawer = alice_client.get(reverse("todo_drawer", args=[todo_id])).content.decode()
    newest, older = drawer.split('class="attempt-error"')[1:3]
    assert ">cut</span>" in newest and ">cut</span>" not in older


@pytest.mark.browser
@pytest.mark.usefixtures("store_db")
def test_the_newest_error_is_open_and_older_ones_are_a_click_away(world, page):
    todo_id = failed_twice(world)
    sign_in(page, "alice")
    page.goto(f"/todos/?open={todo_id}")
    drawer = page.locator(f'#drawer[data-todo-id="{todo_id}"]')
    expect(drawer).to_be_visible()
    newest, older = drawer.locator(".attempt").nth(0), drawer.locator(".attempt").nth(1)

    newest_error = newest.locator("details.attempt-error")
    expect(newest_error).to_have_attribute("open", "")
    expect(newest_error.locator("summary").first).to_contain_text(f"builtins.KeyError: 'user' {SCRIPT}")
    traceback = newest.get_by_label("Traceback of attempt #2")
    expect(traceback).to_be_visible()
    expect(traceback).to_contain_text(EVIL)  # shown as text, never as markup
    expect(drawer.locator("script")).to_have_count(0)
    expect(drawer.locator("img")).to_have_count(0)

    # monospaced, scrolls inside itself (the long line does not widen the drawer), and reachable by keyboard
    assert "mono" in traceback.evaluate("e => getComputedStyle(e).fontFamily").lower()
    sizes = traceback.evaluate("e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]")
    assert sizes[0] > sizes[1] and sizes[2] > sizes[3], sizes
    assert drawer.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    assert traceback.get_attribute("tabindex") == "0"
    traceback.focus()
    assert traceback.evaluate("e => document.activeElement === e")
    page.keyboard.press("End")
    # the key scrolls on the compositor's next frames, not before press() returns: wait for it
    page.wait_for_function("e => e.scrollTop > 0", arg=traceback.element_handle(), timeout=5_000)
    newest.locator("details.attempt-traceback > summary").click()  # the traceback folds away
    expect(traceback).to_be_hidden()

    older_error = older.locator("details.attempt-error")
    expect(older_error).not_to_have_attribute("open", "")
    expect(older_error.locator("summary").first).to_contain_text("requests.ConnectTimeout: connect timed out")
    expect(older.get_by_label("Traceback of attempt #1")).to_be_hidden()
    older_error.locator("summary").first.click()
    expect(older.get_by_label("Traceback of attempt #1")).to_have_text("older frame")
    expect(older.locator(".attempt-error-message")).to_have_text("connect timed out\nafter 30 s")


@pytest.mark.browser
@pytest.mark.usefixtures("store_db")
def test_axe_finds_no_violation_in_a_drawer_with_errors(world, axe_page, scheme, screen):  # noqa: F811
    todo_id = failed_twice(world)
    sign_in(axe_page, "alice")
    axe_page.goto(f"/todos/?open={todo_id}")
    expect(axe_page.locator(f'#drawer[data-todo-id="{todo_id}"]')).to_be_visible()
    axe_page.locator("#drawer details.attempt-error:not([open]) > summary").first.click()
    found = violations(axe_page)
    assert found == [], readable({f"{scheme} {screen} drawer with errors": found})

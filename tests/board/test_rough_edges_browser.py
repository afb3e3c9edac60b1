"""Rough edges of the Board that only a browser can tell: the drawer in the URL, the Board's own
confirmation dialog, toasts, the live indicator, a regular expression Chromium compiles, a swap
that must not trip the CSP, and a person removed from a team while looking.

The ``page`` fixture (``test_browser.py``) fails a test on any console error (a CSP violation
included), uncaught exception or browser-native dialog."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.board import test_browser as base
from tests.board.test_browser import sign_in, state_of
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.store import teams as team_store

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

# The Board suite's browser and page (test_browser.py): its page fails a test on any console
# error, CSP violation, uncaught exception or native dialog.
allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def test_the_drawer_is_in_the_url_back_closes_it_and_reload_reopens_it(world, page):
    first = make(world, "pending", title="First of two")
    second = make(world, "pending", title="Second of two")
    sign_in(page, "alice")
    page.click(f"#todo-{first.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{first.id}"]').wait_for()
    page.wait_for_url(re.compile(rf"/todos/\?open={first.id}$"))
    page.click(f"#todo-{second.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{second.id}"]').wait_for()
    page.wait_for_url(re.compile(rf"open={second.id}"))
    page.go_back()  # back to the first drawer…
    page.locator(f'#drawer[data-todo-id="{first.id}"]').wait_for()
    page.go_back()  # …and to the list without one
    expect(page.locator("#drawer[data-todo-id]")).to_have_count(0)
    assert "open=" not in page.url
    page.go_forward()
    page.locator(f'#drawer[data-todo-id="{first.id}"]').wait_for()
    page.reload()  # the server renders the drawer the URL names
    page.locator(f'#drawer[data-todo-id="{first.id}"]').wait_for()
    expect(page.locator(f"#todo-{first.id}")).to_have_class(re.compile("is-open"))
    page.keyboard.press("Escape")  # closing takes it out of the URL
    expect(page.locator("#drawer[data-todo-id]")).to_have_count(0)
    assert "open=" not in page.url
    page.reload()
    expect(page.locator("#drawer[data-todo-id]")).to_have_count(0)


def test_force_release_and_cancel_ask_in_the_boards_own_dialog(world, page):
    held = make(world, "claimed", title="Held by an agent")
    sign_in(page, "alice")
    page.click(f"#todo-{held.id} a.todo-link")
    drawer = page.locator(f'#drawer[data-todo-id="{held.id}"]')
    drawer.wait_for()
    drawer.get_by_role("button", name="Force release…").click()
    dialog = page.locator("#drawer dialog[open]")
    expect(dialog).to_contain_text("Take the lease away from acme-worker?")
    dialog.get_by_role("button", name="Keep their lease").click()
    expect(page.locator("#drawer dialog[open]")).to_have_count(0)
    assert state_of(held.id) == "claimed"  # nothing sent
    drawer.get_by_role("button", name="Force release…").click()
    page.keyboard.press("Escape")  # Esc closes the dialog, not the drawer
    expect(page.locator("#drawer dialog[open]")).to_have_count(0)
    expect(drawer).to_have_count(1)
    assert state_of(held.id) == "claimed"
    drawer.get_by_role("button", name="Force release…").click()
    page.locator("#drawer dialog[open]").get_by_role("button", name="Force release").click()
    expect(page.locator("#drawer .attempt").first).to_contain_text("Force-released by Board · alice")
    assert state_of(held.id) == "pending"
    page.locator("#drawer").get_by_role("button", name="Cancel…").click()
    dialog = page.locator("#drawer dialog[open]")
    dialog.get_by_role("button", name="Keep it").click()
    assert state_of(held.id) == "pending"
    page.locator("#drawer").get_by_role("button", name="Cancel…").click()
    page.locator("#drawer dialog[open]").get_by_role("button", name="Cancel this todo").click()
    page.locator("#drawer .badge.state-canceled").wait_for()
    assert state_of(held.id) == "canceled"


def test_an_error_toast_goes_once_a_later_action_succeeds(world, page):
    todo = make(world, "mine", title="Report on me")
    sign_in(page, "alice")
    page.click(f"#todo-{todo.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{todo.id}"]').wait_for()
    page.locator("#drawer summary", has_text="Complete…").click()
    page.fill(f"#complete-result-{todo.id}", "{not json")
    page.locator("#drawer form button", has_text="Complete").click()
    expect(page.locator("#toasts .toast-error")).to_have_count(1)
    page.fill(f"#complete-result-{todo.id}", "{}")
    page.locator("#drawer form button", has_text="Complete").click()
    expect(page.locator("#toasts .toast-success")).to_have_count(1)
    expect(page.locator("#toasts .toast-error")).to_have_count(0)


def test_extend_lease_with_a_chosen_duration_shows_the_new_expiry(world, page):
    todo = make(world, "mine", title="Mine for a while")
    sign_in(page, "alice")
    page.click(f"#todo-{todo.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{todo.id}"]').wait_for()
    page.select_option(f"#extend-{todo.id}", "240")
    page.locator("#drawer").get_by_role("button", name="Extend", exact=True).click()
    expect(page.locator("#toasts .toast-success").last).to_contain_text("it now expires at")
    expect(page.locator("#drawer .lease-card")).to_contain_text(re.compile(r"in 3h 5\dm"))


def test_bulk_selected_buttons_are_off_until_something_is_ticked(world, page):
    todo = make(world, "dead", title="One dead letter")
    sign_in(page, "alice")
    retry_selected = page.get_by_role("button", name="Retry selected")
    expect(retry_selected).to_be_disabled()
    page.check(f'#todo-{todo.id} input[name="ids"]')
    expect(retry_selected).to_be_enabled()
    page.uncheck(f'#todo-{todo.id} input[name="ids"]')
    expect(retry_selected).to_be_disabled()


def test_the_indicator_says_nothing_where_the_page_is_not_live(world, page):
    page.goto("/accounts/login/")
    expect(page.locator("#live-status")).to_be_hidden()
    sign_in(page, "alice")
    expect(page.locator("#live-status")).to_have_text("live")
    page.goto("/todos/dead-letters/")
    page.locator("main").wait_for()
    expect(page.locator("#live-status")).to_be_hidden()
    page.goto("/todos/new/")
    expect(page.locator("#live-status")).to_be_hidden()


def test_the_teams_slug_pattern_is_enforced_by_chromium(world, page):
    factories.user("root", superuser=True)
    sign_in(page, "root")
    page.goto("/teams/")
    slug = page.locator("#team-slug")
    slug.fill("Not A Slug!")
    assert page.evaluate("document.getElementById('team-slug').validity.patternMismatch") is True
    slug.fill("a-good-slug")
    assert page.evaluate("document.getElementById('team-slug').validity.valid") is True


def test_a_swap_never_copies_an_inline_style_past_the_csp(world, page):
    """Chromium's autofill leaves ``style=""`` on inputs; htmx used to copy it with setAttribute
    when it settled a swap (attributesToSettle), which the CSP refuses, once per swap."""
    todo = make(world, "mine", title="Swap me")
    sign_in(page, "alice")
    page.click(f"#todo-{todo.id} a.todo-link")
    page.locator(f'#drawer[data-todo-id="{todo.id}"]').wait_for()
    # what autofill does: an empty style attribute, set through the CSSOM
    page.locator(f"#extend-{todo.id}").evaluate("el => { el.style.color = 'red'; el.style.color = ''; }")
    assert page.locator(f"#extend-{todo.id}[style]").count() == 1
    page.locator("#drawer").get_by_role("button", name="Extend", exact=True).click()
    expect(page.locator("#toasts .toast-success").last).to_contain_text("Extended")
    page.locator(f"#extend-{todo.id}").wait_for()
    # the fixture fails the test on the CSP violation a settle would log


def test_a_person_removed_from_a_team_gets_one_message_not_a_404_per_row(world, page):
    for n in range(12):
        make(world, "pending", title=f"Team work {n}")
    sign_in(page, "alice")
    expect(page.locator("#live-status")).to_have_text("live")
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(12)
    execute(team_store.remove_member(None, team_id=world.acme.id, user_id=world.alice_user.id))
    expect(page.locator("#toasts")).to_contain_text("no longer a member of one of your teams", timeout=15_000)
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(0)
    expect(page.locator("#toasts .toast-error")).to_have_count(0)
    with connect() as conn:  # still signed in, still a Board user
        assert conn.execute("SELECT count(*) AS n FROM auth_user WHERE username = 'alice'").fetchone()["n"] == 1

"""The Scheduled tab's bulk actions in a real browser: tick two scheduled todos, "Run selected
now", confirm, and the job runs them (the loop in this process) while the page shows its report;
"Run all matching now…" and "Cancel all matching…" preview the tab's count. The ``page`` fixture
(``test_browser.py``) fails a test on any console error, CSP violation or native dialog."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import bulk_loop, sign_in
from tests.support.board import make
from todos.core.db import connect

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def still_waiting(ids) -> set[str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT id FROM todos WHERE id = ANY(%s) AND next_retry_at IS NOT NULL", (list(ids),)
        ).fetchall()
    return {r["id"] for r in rows}


def test_run_selected_now_and_the_all_matching_previews_on_the_scheduled_tab(world, page):
    later = [make(world, "scheduled", title=f"Nightly export {i}") for i in range(3)]
    sign_in(page, "alice")
    page.goto("/todos/?state=scheduled")
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(3)

    # the all-matching actions say how many they would touch, and change nothing
    page.locator("button", has_text="Run all matching now…").click()
    expect(page.locator("#bulk-panel .bulk-preview")).to_contain_text("3 todos can be run now.")
    page.locator("#bulk-panel [data-dismiss-panel]").click()
    page.locator("button", has_text="Cancel all matching…").click()
    expect(page.locator("#bulk-panel .bulk-preview")).to_contain_text("3 todos can be canceled.")
    page.locator("#bulk-panel [data-dismiss-panel]").click()
    assert still_waiting(t.id for t in later) == {t.id for t in later}

    chosen = later[:2]
    for todo in chosen:
        page.check(f'#todo-{todo.id} input[name="ids"]')
    page.locator("button", has_text="Run selected now").click()
    preview = page.locator("#bulk-panel .bulk-preview")
    expect(preview).to_contain_text("2 selected todos")
    expect(preview).to_contain_text("2 of them can be run now.")
    page.locator("#bulk-panel button.primary", has_text="Run now 2").click()
    expect(page.locator("#bulk-panel .bulk-job")).to_have_attribute("data-state", "queued")
    with bulk_loop():  # the session's daphne runs no loops: the job waits for this process's
        expect(page.locator("#bulk-panel .bulk-report")).to_contain_text("2 changed", timeout=15_000)
    assert still_waiting(t.id for t in later) == {later[2].id}
    # the list refreshed: only the one left waiting is on the Scheduled tab
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(1)
    expect(page.locator(f"#todo-{later[2].id}")).to_be_visible()

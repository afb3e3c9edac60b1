"""Dependencies in a real browser: from the drawer, "Cancel with everything downstream…" shows
what it would cancel in place, and confirming cancels them and swaps the drawer.

The ``page`` fixture (``test_browser.py``) fails a test on any console error or CSP violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page


def create(world, title, **kw):
    return execute(agent_store.create(world.agent, queue="default", title=title, **kw)).todo


def states(*todos) -> list[str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT id, todo_board_state(state, next_retry_at) AS s FROM todos WHERE id = ANY(%s)",
            ([t.id for t in todos],),
        ).fetchall()
    by_id = {r["id"]: r["s"] for r in rows}
    return [by_id[t.id] for t in todos]


def test_cancel_with_everything_downstream_previews_then_cancels_from_the_drawer(world, page):
    root = create(world, "Plan the release")
    child = create(world, "Build the release", after=[root.id])
    grandchild = create(world, "Ship the release", after=[child.id])
    sign_in(page, "alice")
    page.goto(f"/todos/{root.id}/")
    page.get_by_role("link", name="Cancel with everything downstream…").click()
    preview = page.get_by_role("region", name="Cancel this todo and the 2 unfinished todos downstream of it?")
    expect(preview).to_be_visible()
    expect(preview.locator(f'[data-downstream-id="{grandchild.id}"]')).to_contain_text("Blocked")
    expect(preview.locator(f'[data-downstream-id="{grandchild.id}"]')).to_contain_text("will be canceled")
    assert states(root, child, grandchild) == ["pending", "blocked", "blocked"]  # the preview changed nothing
    preview.get_by_label("Note for the audit trail").fill("the plan changed")
    preview.get_by_role("button", name="Cancel 3 todos").click()
    expect(page.locator("#drawer .drawer-state")).to_contain_text("Canceled")
    expect(page.get_by_text("Cancel with everything downstream…")).to_have_count(0)
    assert states(root, child, grandchild) == ["canceled", "canceled", "canceled"]


def test_the_new_todo_form_takes_parents_and_says_beside_the_field_what_is_wrong(world, page):
    parent = create(world, "Plan the release")
    sign_in(page, "alice")
    page.goto("/todos/new/")
    page.get_by_label("Title").fill("Ship it")
    page.get_by_label("After").fill(f"{parent.id}, td_nope")
    page.get_by_label("Run-time limit, seconds").fill("600")
    page.get_by_role("button", name="Create todo").click()
    error = page.locator("#new-after-error")
    expect(error).to_have_text("after[1]: no such todo in this team: td_nope")
    expect(page.get_by_label("After")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("After")).to_have_value(f"{parent.id}, td_nope")  # what was typed is kept
    page.get_by_label("After").fill(parent.id)
    page.get_by_role("button", name="Create todo").click()
    expect(page.locator("#drawer .drawer-state")).to_contain_text("Blocked")
    expect(page.locator(".relatives")).to_contain_text("Plan the release")


def test_the_drawer_s_graph_links_each_node_to_its_own_drawer(world, page):
    parent = create(world, "Plan the release")
    child = create(world, "Build the release", after=[parent.id])
    sign_in(page, "alice")
    page.goto(f"/todos/{child.id}/")
    figure = page.get_by_role("figure", name="Dependency graph: 1 parent above this todo, 0 children below it")
    expect(figure).to_be_visible()
    expect(figure.locator('[aria-current="true"]')).to_contain_text("Blocked")
    figure.get_by_role("link", name="Pending Plan the release").click()
    expect(page.locator("#drawer-title")).to_have_text("Plan the release")
    expect(page.get_by_role("figure")).to_contain_text("Build the release")


def test_run_selected_anyway_on_the_blocked_tab(world, page):
    from tests.board.test_browser import bulk_loop
    from tests.factories import relayed

    parent = create(world, "Plan the release")
    waiting = [create(world, f"Part {n} of the release", after=[parent.id]) for n in range(3)]
    relayed()
    sign_in(page, "alice")
    page.goto("/todos/?state=blocked")
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(3)
    page.locator("button", has_text="Run all matching anyway…").click()
    expect(page.locator("#bulk-panel .bulk-preview")).to_contain_text("3 todos can be run without their parents.")
    page.locator("#bulk-panel [data-dismiss-panel]").click()
    for todo in waiting[:2]:
        page.check(f'#todo-{todo.id} input[name="ids"]')
    page.locator("button", has_text="Run selected anyway").click()
    preview = page.locator("#bulk-panel .bulk-preview")
    expect(preview).to_contain_text("2 of them can be run without their parents now.")
    page.locator("#bulk-panel button.primary", has_text="Run anyway 2").click()
    with bulk_loop():
        expect(page.locator("#bulk-panel .bulk-report")).to_contain_text("2 changed", timeout=15_000)
    assert states(*waiting) == ["pending", "pending", "blocked"]
    expect(page.locator("#todo-rows tr.todo-row")).to_have_count(1)

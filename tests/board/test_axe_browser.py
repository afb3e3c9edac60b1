"""axe-core finds no accessibility violation on any Board page, in light and in dark mode, on a
desktop and at 390×844.

axe is vendored for the tests only (``tests/support/vendor/axe-core``, its version and licence
there). The Board's CSP allows scripts from its own origin only, so the test serves axe from a
path of that origin (a Playwright route) instead of loosening the policy: the pages are checked
exactly as they are served, and the ``page`` fixture's rule (no console error, no CSP
violation) holds here too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.board.test_schedules import acme_schedule
from tests.board.test_unclaimable import PRODUCER_VERBS
from tests.support.board import make
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store
from todos.core.store import rate_limits

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser

AXE = Path(__file__).resolve().parents[1] / "support" / "vendor" / "axe-core" / "axe.min.js"
AXE_PATH = "/__tests__/axe.min.js"  # never a Board URL: the route below answers it
# Every rule axe ships except the experimental ones (axe's default), WCAG 2.x A/AA and its best
# practices included.
RUN = "() => axe.run(document, {resultTypes: ['violations']}).then(r => r.violations)"


@pytest.fixture(params=["light", "dark"])
def scheme(request):
    return request.param


VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(params=list(VIEWPORTS))
def screen(request):
    return request.param


@pytest.fixture
def axe_page(browser, asgi_server, scheme, screen):
    context = browser.new_context(
        base_url=asgi_server.url, viewport=VIEWPORTS[screen], color_scheme=scheme, has_touch=screen == "phone"
    )
    context.route(f"**{AXE_PATH}", lambda route: route.fulfill(path=str(AXE), content_type="text/javascript"))
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.problems = base.watch(page)
    yield page
    context.close()
    assert page.problems == [], page.problems


def violations(page) -> list[dict]:
    page.add_script_tag(url=AXE_PATH)
    return page.evaluate(RUN)


def readable(found: dict[str, list[dict]]) -> str:
    lines = []
    for where, items in found.items():
        for v in items:
            lines.append(f"{where}: [{v['impact']}] {v['id']}: {v['help']} ({v['helpUrl']})")
            for node in v["nodes"][:6]:
                lines.append(f"    {' '.join(map(str, node['target']))}: {node['failureSummary']!r}")
                lines.append(f"      {node['html'][:200]}")
            if len(v["nodes"]) > 6:
                lines.append(f"    … and {len(v['nodes']) - 6} more")
    return "\n".join(lines)


LONG_PAYLOAD = {"rows": [{"line": n, "text": "a payload long enough to scroll in the drawer"} for n in range(60)]}


def seed(world):
    """Something on every page: todos in each state, a paused queue, a schedule, a viewer, work
    no agent can claim (the overview's notice), a throttled rate key, a payload long enough to scroll."""
    todos = {
        state: make(world, state, title=f"An example {state} todo")
        for state in ("pending", "scheduled", "claimed", "retry", "dead", "done", "canceled", "mine")
    }
    todos["long payload"] = make(world, "pending", title="A todo with a long payload", payload=LONG_PAYLOAD)
    # a blocked todo between two others: the drawer's dependency graph, and what cancel with
    # everything downstream would cancel
    todos["blocked"] = make(world, "pending", title="An example blocked todo", after=[todos["pending"].id])
    make(world, "pending", title="Waits for the blocked one", after=[todos["blocked"].id])
    producer = factories.agent(
        factories.endpoint(world.acme, slug="acme-producer", queues=("reports",), verbs=PRODUCER_VERBS)
    )
    execute(agent_store.create(producer, queue="reports", title="Nobody claims reports"))
    execute(human_store.pause_queue(world.alice, world.acme.id, "email"))
    make(world, "pending", title="Waiting in a paused queue", queue="email")
    schedule = acme_schedule(world)
    # a throttled rate key with work waiting: the overview's "Rate limits" with its forms
    execute(rate_limits.set_limit(None, world.acme.id, "api:upstream", 1, "hour"))
    make(world, "claimed", title="Took the hour's allowance", rate_key="api:upstream")
    make(world, "pending", title="Waits for the rate limit", rate_key="api:upstream")
    sue = factories.user("sue", superuser=True)
    factories.member(world.acme, sue, "admin")
    return todos, schedule


def test_axe_finds_no_violation_on_any_page(world, axe_page, scheme, screen):
    """Every page, its drawer, a bulk preview and the confirmation dialog, on a desktop and at
    390×844 (a phone: the folded menu, the drawer as a sheet, rows as cards)."""
    todos, schedule = seed(world)
    page = axe_page
    found: dict[str, list[dict]] = {}

    def check(name: str) -> None:
        result = violations(page)
        if result:
            found[f"{scheme} {screen} {name} ({page.url})"] = result

    page.goto("/accounts/login/")
    check("login")
    page.fill("#id_username", "sue")
    page.fill("#id_password", "not her password")
    page.click("button[type=submit]")
    expect(page.locator("main .form-error")).to_contain_text("did not match")
    check("login refused")
    sign_in(page, "sue")
    page.goto("/")
    expect(page.locator("#stuck-work")).to_be_visible()  # the notice is on the overview checked below
    for name, path in (
        ("overview", "/"),
        ("todos", "/todos/"),
        ("todos search", "/todos/?q=example&state=all"),
        ("dead letters list", "/todos/?state=dead"),
        ("dead letters by reason", "/todos/dead-letters/"),
        ("todos, more filters", "/todos/?kind=report&priority=0..10&created_from=2026-01-01&failed_with=boom"),
        ("todos, a bad filter", "/todos/?priority=lots"),
        ("saved views", "/todos/views/"),
        ("new todo", "/todos/new/"),
        ("todo page (claimed)", f"/todos/{todos['claimed'].id}/"),
        ("todo page (dead)", f"/todos/{todos['dead'].id}/"),
        ("todo page (blocked, its dependency graph)", f"/todos/{todos['blocked'].id}/"),
        ("cancel with everything downstream", f"/todos/{todos['pending'].id}/cancel-downstream/"),
        ("charts", "/charts/"),
        ("schedules", "/schedules/"),
        ("schedule", f"/schedules/{schedule.id}/"),
        ("agents", "/agents/"),
        ("revoke from the agents page", "/agents/acme-worker/revoke/"),
        ("endpoints", "/endpoints/"),
        ("vend an endpoint", "/endpoints/new/"),
        ("edit an endpoint", "/endpoints/acme-worker/edit/"),
        ("activity", "/activity/"),
        ("teams", "/teams/"),
        ("team", "/teams/acme/"),
        ("people", "/people/"),
        ("sign-in roles", "/people/sign-in-roles/"),
        ("change password", "/accounts/password_change/"),
    ):
        page.goto(path)
        page.locator("main").wait_for()
        check(name)

    # the drawer open over the list, with its forms unfolded
    page.goto("/todos/")
    page.click(f"#todo-{todos['retry'].id} a.todo-link")
    drawer = page.locator(f'#drawer[data-todo-id="{todos["retry"].id}"]')
    expect(drawer).to_be_visible()
    check("drawer (retry)")
    page.goto(f"/todos/?open={todos['pending'].id}")
    expect(page.locator(f'#drawer[data-todo-id="{todos["pending"].id}"]')).to_be_visible()
    for summary in page.locator("#drawer details.action-form > summary").all():
        summary.click()
    check("drawer (pending, forms open)")

    # the saved views menu open
    page.goto("/todos/")
    page.locator("#views-menu > summary").click()
    expect(page.locator("#view-name")).to_be_visible()
    check("saved views menu")

    # a payload long enough to scroll: its region takes the focus and has a name
    page.goto(f"/todos/?open={todos['long payload'].id}")
    payload = page.locator("#drawer pre.json").first
    expect(payload).to_be_visible()
    assert payload.evaluate("el => el.scrollHeight > el.clientHeight"), "the payload does not scroll"
    check("drawer (long payload)")

    # a bulk preview
    page.goto("/todos/?state=dead")
    page.locator("button", has_text="Retry all matching").click()
    page.locator("#bulk-panel .bulk-preview").wait_for()
    check("bulk preview")

    # the Board's own confirmation dialog
    page.goto(f"/todos/?open={todos['claimed'].id}")
    page.locator("#drawer [data-confirm]").first.click()
    expect(page.locator("dialog[open]")).to_be_visible()
    check("confirmation dialog")
    if screen == "phone":
        page.goto("/todos/")
        page.locator("[data-nav-toggle]").click()
        expect(page.locator("#mainnav")).to_be_visible()
        check("menu open")
        page.keyboard.press("Escape")
        page.click(f"#todo-{todos['dead'].id} a.todo-link")
        expect(page.locator(f'#drawer[data-todo-id="{todos["dead"].id}"]')).to_be_in_viewport()
        check("drawer sheet (dead)")

    assert found == {}, "axe found violations:\n" + readable(found)
    print(json.dumps({"scheme": scheme, "screen": screen, "pages": "all clean"}))

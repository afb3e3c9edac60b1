"""Single sign-on end to end: Chromium, a Board under daphne, and a real OpenID Connect provider
(oidc-provider under node, tests/support/oidc/) on loopback. Nothing of the provider is mocked:
the browser signs in on its login and consent screens, Board redeems the code at its token
endpoint and checks the ID token against its keys."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.support.browser_watch import watched
from tests.support.live_server import free_port, start_server, stop_server
from tests.support.oidc_provider import start_provider, stop_provider
from todos.core.db import connect, execute
from todos.core.store import identities

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
SECRET = "board-client-secret"

# The provider's own development screens load a stylesheet from the internet and have no favicon:
# their console is not Board's. Board's pages stay watched.
PROVIDER_SCREENS = r"console on http://127\.0\.0\.1:\d+/(interaction|session)/"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.usefixtures("store_db"),
    pytest.mark.console_allows(PROVIDER_SCREENS),
]

if not os.path.exists(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(autouse=True)
def allow_sync_orm_beside_playwright(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def fast_passwords():
    """Overrides the package fixture: daphne checks passwords with the default hashers."""


@pytest.fixture(scope="module")
def sso(django_db_setup):
    """The provider, a Board that trusts it (passwords off), and a Board with a wrong secret."""
    board_port, wrong_port = free_port(), free_port()
    urls = [f"http://127.0.0.1:{board_port}", f"http://127.0.0.1:{wrong_port}"]
    provider = start_provider(board_urls=urls, client_secret=SECRET)
    common = {
        "BOARD_OIDC_ISSUER": provider.issuer,
        "BOARD_OIDC_CLIENT_ID": "board",
        "BOARD_OIDC_PROVIDER_NAME": "Test ID",
        "BOARD_OIDC_ALLOWED_DOMAINS": "example.com",
    }
    board = wrong = None
    try:
        board = start_server(board_port, BOARD_OIDC_CLIENT_SECRET=SECRET, BOARD_OIDC_ONLY="1", **common)
        wrong = start_server(wrong_port, BOARD_OIDC_CLIENT_SECRET="not-the-secret", **common)
        yield provider, board, wrong
    finally:
        for server in (board, wrong):
            if server is not None:
                stop_server(server)
        stop_provider(provider)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = watched(p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True))
        yield browser
        browser.close()


def new_page(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


ACCOUNTS = {
    "pat": {"email": "pat@example.com", "email_verified": True, "name": "Pat", "groups": ["ops", "leads"]},
    "nogroups": {"email": "ng@example.com", "email_verified": True, "name": "No Groups"},
    "eve": {"email": "eve@elsewhere.org", "email_verified": True, "name": "Eve", "groups": ["ops"]},
}


def sign_in_at_provider(page, provider, account: str) -> None:
    """From Board's sign-in page through the provider's login (and consent) screens."""
    page.goto("/accounts/login/")
    page.get_by_role("link", name="Sign in with Test ID").click()
    for _ in range(3):
        page.wait_for_load_state()
        if not page.url.startswith(provider.issuer):
            return
        if page.locator('input[name="login"]').count():
            page.locator('input[name="login"]').fill(account)
            page.locator('input[name="password"]').fill("any password")
        page.locator('button[type="submit"]').first.click()
    page.wait_for_load_state()


def roles(username: str) -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT t.slug, m.role FROM team_members m JOIN teams t ON t.id = m.team_id "
            "JOIN auth_user u ON u.id = m.user_id WHERE u.username = %s",
            (username,),
        ).fetchall()
    return {row["slug"]: row["role"] for row in rows}


def test_sign_in_creates_the_person_with_mapped_roles_re_applies_them_and_signs_out_at_the_provider(sso, browser):
    provider, board, _ = sso
    acme, globex = factories.team("acme"), factories.team("globex")
    execute(identities.add_mapping(None, group_value="ops", team_id=acme.id, role="operator"))
    execute(identities.add_mapping(None, group_value="leads", team_id=globex.id, role="admin"))
    provider.set_accounts(ACCOUNTS)

    page = new_page(browser, board)
    sign_in_at_provider(page, provider, "pat")
    expect(page).to_have_url(re.compile(re.escape(board.url) + "/$"))
    assert roles("pat@example.com") == {"acme": "operator", "globex": "admin"}

    page.locator("details.usermenu summary").click()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(re.escape(provider.issuer) + "/session/end"))
    page.context.close()

    provider.set_accounts({**ACCOUNTS, "pat": {**ACCOUNTS["pat"], "groups": ["ops"], "email": "pat.new@example.com"}})
    again = new_page(browser, board)
    sign_in_at_provider(again, provider, "pat")
    expect(again).to_have_url(re.compile(re.escape(board.url) + "/$"))
    assert roles("pat@example.com") == {"acme": "operator"}  # the same person, found by subject
    again.context.close()


def test_a_sign_in_without_the_groups_claim_says_where_teams_come_from(sso, browser):
    provider, board, _ = sso
    provider.set_accounts(ACCOUNTS)
    page = new_page(browser, board)
    sign_in_at_provider(page, provider, "nogroups")
    expect(page.get_by_text("Your teams on Board come from your provider's groups")).to_be_visible()
    assert roles("ng@example.com") == {}
    page.context.close()


# The clear page answers with its status (403, 502), which Chromium logs as a failed resource.
REFUSED_CALLBACK = r"/oidc/callback/\?.*status of (403|502)"


@pytest.mark.console_allows(REFUSED_CALLBACK)
def test_a_disallowed_domain_gets_the_clear_page(sso, browser):
    provider, board, _ = sso
    provider.set_accounts(ACCOUNTS)
    page = new_page(browser, board)
    sign_in_at_provider(page, provider, "eve")
    expect(page.get_by_role("heading", name="Sign-in failed")).to_be_visible()
    expect(page.get_by_text("Accounts at elsewhere.org cannot sign in to this Board.")).to_be_visible()
    assert "board.oidc" in board.log() and "elsewhere.org" in board.log()
    page.context.close()


@pytest.mark.console_allows(REFUSED_CALLBACK)
def test_a_wrong_client_secret_gets_the_clear_page(sso, browser):
    provider, _, wrong = sso
    provider.set_accounts(ACCOUNTS)
    page = new_page(browser, wrong)
    sign_in_at_provider(page, provider, "pat")
    expect(page.get_by_role("heading", name="Sign-in failed")).to_be_visible()
    expect(page.get_by_text("refused Board's client credentials")).to_be_visible()
    assert "the token endpoint answered 401" in wrong.log() and "not-the-secret" not in wrong.log()
    page.context.close()


def test_passwords_off_refuses_a_person_and_lets_a_break_glass_admin_in(sso, browser):
    _, board, _ = sso
    factories.user("pat", password="pw-for-tests-1")
    factories.user("root", password="pw-for-tests-1", superuser=True)
    page = new_page(browser, board)
    page.goto("/accounts/login/")
    page.get_by_text("Site admin sign-in with a password").click()
    page.get_by_label("Username").fill("pat")
    page.get_by_label("Password").fill("pw-for-tests-1")
    page.get_by_role("button", name="Sign in with a password").click()
    expect(page.get_by_text("signs in with Test ID only")).to_be_visible()
    page.get_by_text("Site admin sign-in with a password").click()
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("pw-for-tests-1")
    page.get_by_role("button", name="Sign in with a password").click()
    expect(page).to_have_url(re.compile(re.escape(board.url) + "/$"))
    page.context.close()

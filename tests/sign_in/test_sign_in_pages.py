"""The sign-in pages with single sign-on: the button, passwords off, and a clear page (and a
``board.oidc`` warning without the secret) for each way a provider's sign-in fails."""

from __future__ import annotations

import logging

import pytest
from django.core.exceptions import SuspiciousOperation
from django.test import Client, override_settings

from tests import factories
from todos.dashboard.sign_in import discovery
from todos.dashboard.sign_in.backends import ProviderBackend, SignInRefused, check_issuer_and_audience

pytestmark = pytest.mark.usefixtures("store_db")

SECRET = "client-secret-never-logged"
BACKENDS = ["todos.dashboard.sign_in.backends.PasswordBackend", "todos.dashboard.sign_in.backends.ProviderBackend"]
SSO = {
    "BOARD_OIDC_ISSUER": "http://127.0.0.1:9",  # the discard port: nothing answers
    "BOARD_OIDC_CLIENT_ID": "board",
    "BOARD_OIDC_CLIENT_SECRET": SECRET,
    "OIDC_RP_CLIENT_SECRET": SECRET,
    "BOARD_OIDC_PROVIDER_NAME": "Acme ID",
    "AUTHENTICATION_BACKENDS": BACKENDS,
    "OIDC_TIMEOUT": 1,
}


@pytest.fixture(autouse=True)
def fresh_discovery():
    discovery.forget()
    yield
    discovery.forget()


def test_without_an_issuer_the_sign_in_page_is_the_password_form_only():
    page = Client().get("/accounts/login/").content.decode()
    assert "Sign in with" not in page and 'name="password"' in page
    assert Client().get("/oidc/authenticate/").status_code == 404


@override_settings(**SSO)
def test_with_an_issuer_the_page_offers_the_provider_beside_the_password_form():
    page = Client().get("/accounts/login/?next=/todos/").content.decode()
    assert "Sign in with Acme ID" in page and "/oidc/authenticate/?next=/todos/" in page
    assert 'name="password"' in page and "Local passwords are off" not in page


@override_settings(**SSO)
def test_an_unreachable_issuer_gets_a_clear_page_and_a_warning_without_the_secret(caplog):
    caplog.set_level(logging.WARNING, logger="board.oidc")
    response = Client().get("/oidc/authenticate/")
    assert response.status_code == 502
    assert "cannot reach your sign-in provider" in response.content.decode()
    [record] = [r for r in caplog.records if r.name == "board.oidc"]
    assert record.levelno == logging.WARNING and "openid-configuration" in record.getMessage()
    assert SECRET not in caplog.text


@override_settings(**SSO)
def test_a_provider_error_in_the_callback_gets_a_clear_page(caplog):
    caplog.set_level(logging.WARNING, logger="board.oidc")
    response = Client().get("/oidc/callback/?error=access_denied&error_description=nope&state=x")
    assert response.status_code == 403
    assert "did not sign you in (access_denied)" in response.content.decode()
    assert any("access_denied" in r.getMessage() for r in caplog.records if r.name == "board.oidc")


@override_settings(**SSO)
def test_a_callback_without_a_known_state_gets_a_clear_page():
    assert Client().get("/oidc/callback/").status_code == 400
    unknown = Client().get("/oidc/callback/?code=abc&state=unknown")
    assert unknown.status_code == 400 and "Start again" in unknown.content.decode()


@override_settings(**SSO, BOARD_OIDC_ALLOWED_DOMAINS=["example.com"])
def test_claims_need_an_email_in_an_allowed_domain():
    backend = ProviderBackend()
    assert backend.verify_claims({"email": "pat@EXAMPLE.com"})
    with pytest.raises(SignInRefused, match="not in BOARD_OIDC_ALLOWED_DOMAINS") as refused:
        backend.verify_claims({"email": "pat@elsewhere.org"})
    assert "elsewhere.org cannot sign in" in refused.value.message
    with pytest.raises(SignInRefused, match="no email claim"):
        backend.verify_claims({"sub": "x"})


@override_settings(**SSO, BOARD_OIDC_ONLY=True)
def test_passwords_off_refuses_a_person_and_lets_a_site_admin_in():
    factories.user("pat", password="pw-for-tests-1")
    factories.user("root", password="pw-for-tests-1", superuser=True)
    page = Client().get("/accounts/login/").content.decode()
    assert "Local passwords are off" in page
    refused = Client().post("/accounts/login/", {"username": "pat", "password": "pw-for-tests-1"})
    assert refused.status_code == 200 and "signs in with Acme ID only" in refused.content.decode()
    admin = Client()
    assert admin.post("/accounts/login/", {"username": "root", "password": "pw-for-tests-1"}).status_code == 302
    assert admin.get("/accounts/password_change/").status_code == 200


@override_settings(**SSO, BOARD_OIDC_ONLY=True)
def test_passwords_off_says_so_on_the_password_change_page():
    pat = factories.user("pat")
    client = Client()
    client.force_login(pat, backend=BACKENDS[1])
    response = client.get("/accounts/password_change/")
    assert response.status_code == 403 and "Passwords are off" in response.content.decode()
    assert client.post("/accounts/password_change/", {}).status_code == 403


@override_settings(**SSO)
def test_sign_out_without_a_provider_session_returns_to_the_sign_in_page():
    client = Client()
    client.force_login(factories.user("pat"), backend=BACKENDS[0])
    response = client.post("/accounts/logout/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302  # signed out


@override_settings(**SSO)
def test_an_id_token_from_another_issuer_or_for_another_client_is_refused():
    check_issuer_and_audience({"iss": "http://127.0.0.1:9/", "aud": ["board", "other"]})
    with pytest.raises(SuspiciousOperation, match="issuer"):
        check_issuer_and_audience({"iss": "https://evil.example", "aud": "board"})
    with pytest.raises(SuspiciousOperation, match="not for this client"):
        check_issuer_and_audience({"iss": "http://127.0.0.1:9", "aud": "someone-else"})

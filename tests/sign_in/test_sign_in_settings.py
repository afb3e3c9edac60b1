"""Single sign-on's settings are checked at start, each refusal naming the variable."""

from __future__ import annotations

import pytest

from tests.test_project import _settings_in_subprocess

SSO = {"BOARD_OIDC_ISSUER": "https://id.example.com", "BOARD_OIDC_CLIENT_ID": "board", "BOARD_OIDC_CLIENT_SECRET": "s"}


@pytest.mark.parametrize(
    "env, message",
    [
        ({**SSO, "BOARD_OIDC_ISSUER": "id.example.com"}, "BOARD_OIDC_ISSUER must be an http(s) URL"),
        ({**SSO, "BOARD_OIDC_CLIENT_SECRET": ""}, "set BOARD_OIDC_CLIENT_ID and BOARD_OIDC_CLIENT_SECRET too"),
        ({"BOARD_OIDC_ONLY": "1"}, "BOARD_OIDC_ONLY=1 needs BOARD_OIDC_ISSUER"),
        ({**SSO, "BOARD_OIDC_ONLY": "maybe"}, "BOARD_OIDC_ONLY must be a boolean"),
    ],
)
def test_bad_sign_in_settings_are_named(env, message):
    out = _settings_in_subprocess(env)
    assert out.returncode != 0 and message in out.stderr


def test_a_configured_issuer_with_a_trailing_slash_starts():
    out = _settings_in_subprocess({**SSO, "BOARD_OIDC_ISSUER": "https://id.example.com/realms/acme/"})
    assert out.returncode == 0, out.stderr

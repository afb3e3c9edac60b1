"""The sign-in and sign-out pages with single sign-on (docs/sign-in.md).

The code flow is mozilla-django-oidc's views with the endpoints from discovery and every failure
turned into a page that says what happened (and a ``board.oidc`` warning that says why), never a
500 and never a secret.
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import auth, messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import SuspiciousOperation
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from todos.dashboard.sign_in import discovery
from todos.dashboard.sign_in.backends import SignInRefused, passwords_off_for

log = logging.getLogger("board.oidc")

NO_GROUPS = (
    "Your teams on Board come from your provider's groups, and this sign-in carried none: "
    "you have no team roles from it. Ask your provider's admin, or a Board site admin."
)


def sign_in_context() -> dict:
    return {
        "oidc_enabled": bool(settings.BOARD_OIDC_ISSUER),
        "oidc_provider_name": settings.BOARD_OIDC_PROVIDER_NAME,
        "passwords_off": bool(settings.BOARD_OIDC_ONLY),
    }


def failure(request, message: str, reason: str, status: int):
    log.warning("sign-in failed: %s", reason)
    return render(request, "registration/sign_in_error.html", {"message": message, **sign_in_context()}, status=status)


class LoginView(auth_views.LoginView):
    """Django's sign-in page, with the provider's button beside (or instead of) the password form."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), **sign_in_context()}


class PasswordChangeView(auth_views.PasswordChangeView):
    """Refused, with a page that says so, to a person whose password is off."""

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and passwords_off_for(request.user):
            return render(request, "registration/passwords_off.html", sign_in_context(), status=403)
        return super().dispatch(request, *args, **kwargs)


class SignInStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider's authorization endpoint (from discovery)."""

    def __init__(self, *args, **kwargs):
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)
        self.OIDC_RP_CLIENT_ID = settings.BOARD_OIDC_CLIENT_ID

    def get(self, request):  # pyright: ignore[reportIncompatibleMethodOverride]  # a page, not only a redirect
        if not settings.BOARD_OIDC_ISSUER:
            return failure(request, "Single sign-on is not set up on this Board.", "BOARD_OIDC_ISSUER is empty", 404)
        try:
            self.OIDC_OP_AUTH_ENDPOINT = discovery.document()["authorization_endpoint"]
        except discovery.ProviderUnavailable as exc:
            return failure(
                request, "Board cannot reach your sign-in provider right now. Try again shortly.", exc.reason, 502
            )
        return super().get(request)


class SignInCallback(OIDCAuthenticationCallbackView):
    """The provider's answer: a code to redeem, or an error."""

    def get(self, request):  # pyright: ignore[reportIncompatibleMethodOverride]  # a page, not only a redirect
        if not settings.BOARD_OIDC_ISSUER:
            return failure(request, "Single sign-on is not set up on this Board.", "BOARD_OIDC_ISSUER is empty", 404)
        error = request.GET.get("error")
        if error:
            super().get(request)  # drops the state and any session
            described = request.GET.get("error_description", "")[:200]
            return failure(
                request,
                f"Your provider did not sign you in ({error[:80]}). Try again, or ask your provider's admin.",
                f"the provider answered error={error[:80]!r} {described!r}",
                403,
            )
        try:
            return super().get(request)
        except SignInRefused as exc:
            return failure(request, exc.message, exc.reason, 403)
        except discovery.ProviderUnavailable as exc:
            return failure(
                request, "Board cannot reach your sign-in provider right now. Try again shortly.", exc.reason, 502
            )
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "?"
            return failure(
                request,
                "Board could not complete the sign-in with your provider: it refused Board's client "
                "credentials or the sign-in code. A site admin should check the client id and secret.",
                f"the token endpoint answered {status}",
                502,
            )
        except requests.RequestException as exc:
            return failure(
                request,
                "Board cannot reach your sign-in provider right now. Try again shortly.",
                type(exc).__name__,
                502,
            )
        except SuspiciousOperation as exc:
            return failure(
                request, "This sign-in could not be checked. Start again from the sign-in page.", str(exc), 400
            )

    def login_failure(self):  # pyright: ignore[reportIncompatibleMethodOverride]  # a page, not only a redirect
        return failure(
            self.request,
            "The sign-in did not complete. Start again from the sign-in page.",
            "no code and state, an unknown state, or an inactive account",
            400,
        )

    def login_success(self):
        response = super().login_success()
        if getattr(self.request, "board_sign_in_without_groups", False):
            messages.warning(self.request, NO_GROUPS)
        return response


def end_session_url(request, id_token: str | None) -> str | None:
    """The provider's end-session URL (RP-initiated logout), when it has one."""
    if not settings.BOARD_OIDC_ISSUER or not id_token:
        return None
    try:
        endpoint = discovery.document().get("end_session_endpoint")
    except discovery.ProviderUnavailable as exc:
        log.warning("sign-out stays on Board: %s", exc.reason)
        return None
    if not endpoint:
        return None
    query = {
        "id_token_hint": id_token,
        "post_logout_redirect_uri": request.build_absolute_uri(reverse("login")),
        "client_id": settings.BOARD_OIDC_CLIENT_ID,
    }
    return f"{endpoint}?{urlencode(query)}"


@require_POST
def sign_out(request):
    """Ends the Board session, then the provider's when it can."""
    id_token = request.session.get("oidc_id_token")
    auth.logout(request)
    return HttpResponseRedirect(end_session_url(request, id_token) or reverse("login"))

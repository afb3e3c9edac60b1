"""The Board's two ways in: a local password, and a provider's sign-in.

:class:`ProviderBackend` is mozilla-django-oidc's backend with its hooks filled in: the endpoints
from discovery, the claims checked (email, allowed domain), the person found or made by the store
(subject, then verified email) and the group mappings re-applied at every sign-in.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.store import identities
from todos.dashboard.sign_in import discovery

log = logging.getLogger("board.oidc")


class SignInRefused(Exception):
    """A provider's sign-in Board will not accept; ``message`` is what the person reads."""

    def __init__(self, message: str, reason: str):
        super().__init__(reason)
        self.message = message
        self.reason = reason


def passwords_off_for(user) -> bool:
    """With BOARD_OIDC_ONLY, only site admins (the break-glass accounts) use a password."""
    return bool(settings.BOARD_OIDC_ONLY) and not user.is_superuser


class PasswordBackend(ModelBackend):
    """Django's password check, refused to all but site admins when passwords are off."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and passwords_off_for(user):
            log.warning("password sign-in refused for %s: local passwords are off", user.get_username())
            return None
        return user


def domain_allowed(email: str) -> bool:
    allowed = settings.BOARD_OIDC_ALLOWED_DOMAINS
    return not allowed or email.rpartition("@")[2].lower() in allowed


def check_issuer_and_audience(payload: dict[str, Any]) -> None:
    issuer = settings.BOARD_OIDC_ISSUER
    if str(payload.get("iss", "")).rstrip("/") != issuer:
        raise SuspiciousOperation(f"the ID token's issuer {payload.get('iss')!r} is not {issuer!r}")
    audience = payload.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if settings.BOARD_OIDC_CLIENT_ID not in audiences:
        raise SuspiciousOperation("the ID token is not for this client (aud)")


class ProviderBackend(OIDCAuthenticationBackend):
    """A sign-in through the configured provider (the code flow's callback calls it)."""

    def __init__(self, *args, **kwargs):
        # Nothing of the provider is read here: Django makes a backend for every request's session
        # check, and only a callback needs the endpoints (see ``authenticate``).
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.BOARD_OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.BOARD_OIDC_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = "RS256"
        self.OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request, **kwargs):
        if request is None or not request.GET.get("code") or not request.GET.get("state"):
            return None  # a password sign-in: not ours
        doc = discovery.document()
        self.OIDC_OP_TOKEN_ENDPOINT = doc["token_endpoint"]
        self.OIDC_OP_USER_ENDPOINT = doc.get("userinfo_endpoint")
        self.OIDC_OP_JWKS_ENDPOINT = doc["jwks_uri"]
        return super().authenticate(request, **kwargs)

    def verify_token(self, token, **kwargs):
        """The library checks the ID token's signature and nonce; Board also checks that the
        token is from the configured issuer and for this client (``iss`` and ``aud``)."""
        payload = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the ID token (a signed userinfo answer has no nonce to check)
            check_issuer_and_audience(payload)
        return payload

    def get_user(self, user_id):
        return ModelBackend.get_user(self, user_id)  # a deactivated person's session ends

    def get_userinfo(self, access_token, id_token, payload):
        """The ID token's claims, completed by the userinfo endpoint's when the provider has one."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            claims.update(super().get_userinfo(access_token, id_token, payload))
        return claims

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        email = claims.get("email")
        if not isinstance(email, str) or "@" not in email:
            raise SignInRefused(
                "Your provider did not send an email address, which Board needs to know who you are.",
                "the token has no email claim",
            )
        if not domain_allowed(email):
            raise SignInRefused(
                f"Accounts at {email.rpartition('@')[2]} cannot sign in to this Board.",
                f"email domain {email.rpartition('@')[2]!r} is not in BOARD_OIDC_ALLOWED_DOMAINS",
            )
        return True

    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        self.verify_claims(claims)
        try:
            person = execute(
                identities.sign_in(
                    issuer=settings.BOARD_OIDC_ISSUER,
                    subject=claims.get("sub"),
                    email=claims["email"],
                    email_verified=claims.get("email_verified") is True,
                )
            )
        except StoreError as exc:
            raise SignInRefused(f"Board could not match your account: {exc.message}.", exc.message) from None
        if not person.is_active:
            raise SignInRefused(
                "Your Board account is deactivated; ask a site admin.", f"{person.username} is deactivated"
            )
        groups_claim = settings.BOARD_OIDC_GROUPS_CLAIM
        if groups_claim not in claims:
            log.warning("sign-in of %s carried no %r claim: no mapped team roles", person.username, groups_claim)
            self.request.board_sign_in_without_groups = True
        execute(identities.apply_mappings(user_id=person.user_id, groups=claims.get(groups_claim)))
        return self.UserModel.objects.get(pk=person.user_id)

    def filter_users_by_claims(self, claims):  # the store matches (get_or_create_user)
        return self.UserModel.objects.none()

    def create_user(self, claims):  # the store creates (get_or_create_user)
        raise NotImplementedError

    def update_user(self, user, claims):
        return user

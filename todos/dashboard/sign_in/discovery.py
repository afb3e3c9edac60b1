"""The provider's discovery document, fetched at first use and kept by this process.

Only the document is kept per process: it is the provider's, the same for every process, and a
process that restarts fetches it again. A failed fetch is not kept, so the next sign-in tries again.
"""

from __future__ import annotations

import logging
import threading

import requests
from django.conf import settings

log = logging.getLogger("board.oidc")

_lock = threading.Lock()
_documents: dict[str, dict] = {}

REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read; ``reason`` says why (never a secret)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def discovery_url(issuer: str) -> str:
    return f"{issuer.rstrip('/')}/.well-known/openid-configuration"


def document() -> dict:
    """The configured issuer's discovery document (raises :class:`ProviderUnavailable`)."""
    issuer = settings.BOARD_OIDC_ISSUER
    with _lock:
        if issuer in _documents:
            return _documents[issuer]
    url = discovery_url(issuer)
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        doc = response.json()
    except requests.RequestException as exc:
        raise ProviderUnavailable(f"could not read {url}: {type(exc).__name__}: {exc}") from None
    except ValueError:
        raise ProviderUnavailable(f"{url} did not answer JSON") from None
    missing = [key for key in REQUIRED if not isinstance(doc, dict) or not doc.get(key)]
    if missing:
        raise ProviderUnavailable(f"{url} names no {', '.join(missing)}")
    with _lock:
        _documents[issuer] = doc
    return doc


def forget() -> None:
    """Drop the kept documents (the tests switch providers)."""
    with _lock:
        _documents.clear()

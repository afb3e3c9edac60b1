"""Bearer tokens and scopes.

A token is looked up by its SHA-256 digest (one indexed SELECT), and the endpoint it names is kept
in the process's credential cache (``todos/core/credential_cache.py``) for at most
``BOARD_TOKEN_CACHE_SECONDS``, so an agent's requests cost no lookup of their own. A revoke,
rotation or scope change ends the cached copy at once in the process that made it and, through
its notification, in every listening process (``credential_watch.py``); the TTL bounds it where
a notification was lost. An unknown token is never cached, so a freshly vended one works at once;
a token's expiry is checked on every request. ``last_seen_at`` is stamped at most once a minute
per endpoint and process: the entry says when a stamp is due, so most requests neither write nor
ask.
"""

from __future__ import annotations

import re
import time

from todos.agents.api.credential_watch import watch
from todos.agents.api.errors import Unauthorized
from todos.core.credential_cache import CACHE, Entry, ttl
from todos.core.db import aexecute
from todos.core.errors import Forbidden
from todos.core.selectors.agent_api import Credential, credential_for
from todos.core.store.endpoints import token_hash, touch_last_seen

BEARER = re.compile(r"^Bearer[ \t]+([!-~]+)[ \t]*$", re.IGNORECASE)
TOKEN_MAX_CHARS = 256


def bearer_token(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not header:
        raise Unauthorized("missing bearer token (send Authorization: Bearer <token>)")
    match = BEARER.match(header)
    if match is None or len(match.group(1)) > TOKEN_MAX_CHARS:
        raise Unauthorized("malformed Authorization header (expected: Bearer <token>)")
    return match.group(1)


async def authenticate(header: str | None) -> Credential:
    """The caller's endpoint, or :class:`Unauthorized` for a missing, unknown, revoked or expired token."""
    digest = token_hash(bearer_token(header))
    now = time.monotonic()
    entry = CACHE.get(digest, now) or await _look_up(digest, now)
    credential = entry.credential
    if credential.revoked:
        raise Unauthorized("this endpoint has been revoked")
    if entry.expired(now):
        raise Unauthorized("this endpoint's token has expired")
    if CACHE.claim_stamp(entry, now):
        await aexecute(touch_last_seen(credential.endpoint_id))
    return credential


async def _look_up(digest: bytes, now: float) -> Entry:
    """Read the credential and cache it; ``now`` was taken before the read."""
    if ttl() > 0:
        watch()
    generation = CACHE.generation  # before the read: a forget during it keeps its result out
    credential = await aexecute(credential_for(digest))
    if credential is None:
        raise Unauthorized("unknown bearer token")
    return CACHE.remember(digest, credential, generation=generation, read_at=now)


def authorize(verb_name: str, granted_by: frozenset[str], credential: Credential) -> None:
    """Refuse a verb none of whose granting scope verbs the endpoint holds."""
    if not granted_by.intersection(credential.scope_verbs):
        raise Forbidden(f"this endpoint may not call {verb_name} (not in its scope_verbs)")

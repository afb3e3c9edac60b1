"""Bearer tokens and scopes.

Every request looks its token up afresh (one indexed SELECT by SHA-256 digest): nothing is cached,
so a revoked, expired or rotated token fails on its very next request. ``last_seen_at`` is stamped
at most once a minute; the lookup itself says whether a stamp is due, so most requests write
nothing.
"""

from __future__ import annotations

import re

from todos.agents.api.errors import Unauthorized
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
    credential = await aexecute(credential_for(token_hash(bearer_token(header))))
    if credential is None:
        raise Unauthorized("unknown bearer token")
    if credential.revoked:
        raise Unauthorized("this endpoint has been revoked")
    if credential.expired:
        raise Unauthorized("this endpoint's token has expired")
    if credential.needs_touch:
        await aexecute(touch_last_seen(credential.endpoint_id))
    return credential


def authorize(verb_name: str, granted_by: frozenset[str], credential: Credential) -> None:
    """Refuse a verb none of whose granting scope verbs the endpoint holds."""
    if not granted_by.intersection(credential.scope_verbs):
        raise Forbidden(f"this endpoint may not call {verb_name} (not in its scope_verbs)")

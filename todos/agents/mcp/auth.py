"""Who is calling ``/mcp/``: the endpoint's bearer token, looked up on every HTTP request.

MCP runs over many HTTP requests (the ``initialize`` POST, one POST per tool call, a long GET for
server notifications, a DELETE at the end). Each one is authenticated on its own, with the agent
API's :func:`todos.agents.api.auth.authenticate` (its credential cache: a revoke reaches it through a
notification), *before* the MCP layer sees it: an unknown, revoked or expired token is answered
``401`` and never reaches a session, so a token revoked mid-session is refused once the revoke
reaches the process (milliseconds; at most ``BOARD_TOKEN_CACHE_SECONDS``).

An accepted request carries its :class:`~todos.core.selectors.agent_api.Credential` in the ASGI scope
(``scope["board.credential"]``), where the tool handlers read it back through the SDK's request
context. The scope also gets the SDK's ``user``: the session manager binds a session to the
principal that opened it and answers ``404`` to any other, so one endpoint cannot drive (or listen
on) another's session by learning its id. The principal is the endpoint plus the token's digest:
a rotated token starts a new session.

The refusal body is a JSON-RPC error (``id: null``) whose message starts with the agent API's
code, ``"unauthorized: …"``: the official client surfaces exactly that as the call's error. When
the lookup cannot reach the database (``todos.core.unavailable``) the refusal is ``503`` with
``Retry-After``, the code ``unavailable`` and ``retry_after`` in its ``data``.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from todos.agents.api.auth import authenticate, bearer_token
from todos.agents.api.errors import internal_message, new_request_id
from todos.core.errors import StoreError
from todos.core.selectors.agent_api import Credential
from todos.core.store.endpoints import token_hash
from todos.core.unavailable import classify as classify_unavailable
from todos.core.unavailable import describe as describe_unavailable

logger = logging.getLogger("todos.agents.mcp")

CREDENTIAL_KEY = "board.credential"
DIGEST_KEY = "board.token_digest"
# JSON-RPC reserves -32000..-32099 for the server's own errors; these are ours.
RPC_UNAUTHORIZED = -32001
RPC_UNAVAILABLE = -32003
RPC_INTERNAL = -32603
RPC_BAD_REQUEST = -32600


class Refused(Exception):
    """The request is answered here, with ``status`` and a JSON-RPC error body."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        rpc_code: int,
        challenge: str | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.rpc_code = rpc_code
        self.challenge = challenge  # WWW-Authenticate, on a 401
        self.retry_after = retry_after  # Retry-After, on a 503


def header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def check_host(scope) -> None:
    """The ``Host`` header must be one of ``ALLOWED_HOSTS``, as Django demands of every other path."""
    host = None
    if settings.USE_X_FORWARDED_HOST:
        host = header(scope, b"x-forwarded-host")
    host = host or header(scope, b"host") or ""
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, allowed):
        raise Refused(400, "invalid", "the Host header is not one this server answers to", RPC_BAD_REQUEST)


async def authenticate_scope(scope) -> dict:
    """The scope with the caller's credential and principal, or :class:`Refused`."""
    check_host(scope)
    authorization = header(scope, b"authorization")
    try:
        credential = await authenticate(authorization)
    except StoreError as exc:
        if exc.code == "unauthorized":
            # RFC 6750: a request with no credentials gets a challenge without an error code.
            challenge = 'Bearer realm="board"' + (', error="invalid_token"' if authorization else "")
            raise Refused(401, "unauthorized", exc.message, RPC_UNAUTHORIZED, challenge) from None
        raise refusal_for(exc) from None
    digest = token_hash(bearer_token(authorization))
    return {**scope, CREDENTIAL_KEY: credential, DIGEST_KEY: digest, "user": principal(credential, digest)}


def refusal_for(exc: BaseException) -> Refused:
    """What to answer for a failure outside the MCP layer: ``unavailable`` (503) when the database
    cannot answer now, else ``internal`` (500) with a request id, the details only in the log.
    Always a JSON-RPC error, never the server's HTML error page."""
    unavailable = classify_unavailable(exc)
    if unavailable is not None:
        logger.warning("database unavailable for an MCP request: %s", describe_unavailable(exc))
        return Refused(503, "unavailable", unavailable.message, RPC_UNAVAILABLE, retry_after=unavailable.retry_after)
    request_id = new_request_id()
    if isinstance(exc, StoreError):
        logger.error("internal error in MCP request %s: %s", request_id, exc.message)
    else:
        logger.error("internal error in MCP request %s", request_id, exc_info=exc)
    return Refused(500, "internal", internal_message(request_id), RPC_INTERNAL)


def principal(credential: Credential, digest: bytes) -> AuthenticatedUser:
    """The SDK's user for session binding (see the module docstring). ``token`` holds the digest,
    never the token itself."""
    return AuthenticatedUser(
        AccessToken(
            token=digest.hex(),
            client_id=str(credential.endpoint_id),
            scopes=sorted(credential.scope_verbs),
            subject=digest.hex(),
        )
    )


async def send_refusal(send, refused: Refused) -> None:
    data: dict = {"code": refused.code, "message": refused.message}
    if refused.retry_after is not None:
        data["retry_after"] = refused.retry_after
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": refused.rpc_code, "message": f"{refused.code}: {refused.message}", "data": data},
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if refused.challenge:
        headers.append((b"www-authenticate", refused.challenge.encode()))
    if refused.retry_after is not None:
        headers.append((b"retry-after", str(refused.retry_after).encode()))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

"""The API's errors as exceptions, one class per error code.

Every answer that is not a success carries ``{"error": {"code", "message"}}``; the client raises
the class of its code (:data:`BY_CODE`), with the HTTP status, the message, the request id the
server logged it under, and for ``unavailable`` the ``Retry-After`` it sent.
"""

from __future__ import annotations


class BoardError(Exception):
    """An answer of the API that is not a success."""

    code = "error"

    def __init__(self, message: str, *, status: int = 0, request_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.request_id = request_id

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class Invalid(BoardError):
    """Bad input: ``field`` names it (``title``, ``items[3].queue``, ``next.wait_seconds``)."""

    code = "invalid"

    @property
    def field(self) -> str:
        return self.message.split(":", 1)[0].strip()


class Unauthorized(BoardError):
    """A missing, unknown, revoked or expired token."""

    code = "unauthorized"


class Forbidden(BoardError):
    """A verb or queue outside the endpoint's scope."""

    code = "forbidden"


class NotFound(BoardError):
    """No such todo (or schedule) for this endpoint."""

    code = "not_found"


class Conflict(BoardError):
    """The todo is not in a state this call can act on (another holder, a lapsed lease, a wrong
    lease token, a key in flight)."""

    code = "conflict"


class LeaseLost(Conflict):
    """A report or heartbeat for a todo this worker no longer holds: its lease lapsed and the
    todo was reaped or taken over. Drop the work; do not report it again."""


class TooLarge(BoardError):
    code = "too_large"


class MethodNotAllowed(BoardError):
    code = "method_not_allowed"


class Unavailable(BoardError):
    """The server or its database cannot answer now; nothing was written. ``retry_after`` is the
    server's ``Retry-After`` in seconds (None when it sent none: the server itself is out of reach)."""

    code = "unavailable"

    def __init__(
        self, message: str, *, status: int = 503, request_id: str | None = None, retry_after: float | None = None
    ):
        super().__init__(message, status=status, request_id=request_id)
        self.retry_after = retry_after


class ServerError(BoardError):
    """An internal error of the server (its log has the details under ``request_id``)."""

    code = "internal"


BY_CODE: dict[str, type[BoardError]] = {
    cls.code: cls
    for cls in (
        Invalid,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        TooLarge,
        MethodNotAllowed,
        Unavailable,
        ServerError,
    )
}
# The reports whose conflict means the lease is gone.
LEASE_VERBS = frozenset({"heartbeat", "complete", "fail", "release"})


def error_for(verb: str, status: int, body: object, request_id: str | None, retry_after: float | None) -> BoardError:
    """The exception for a refused call."""
    detail = body.get("error") if isinstance(body, dict) else None
    code = detail.get("code") if isinstance(detail, dict) else None
    message = detail.get("message") if isinstance(detail, dict) else None
    if not isinstance(message, str):
        message = f"HTTP {status} without an error body"
    if code == "conflict" and verb in LEASE_VERBS:
        return LeaseLost(message, status=status, request_id=request_id)
    if code == "unavailable" or (code is None and status in (502, 503, 504)):
        return Unavailable(message, status=status, request_id=request_id, retry_after=retry_after)
    cls = BY_CODE.get(code or "", ServerError if status >= 500 else BoardError)
    return cls(message, status=status, request_id=request_id)

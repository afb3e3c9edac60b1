"""The API's errors as exceptions, one class per error code.

Every answer that is not a success carries ``{"error": {"code", "message"}}``; the client raises
the class of its code (:data:`BY_CODE`), with the HTTP status, the message, the request id the
server logged it under (``X-Request-Id``), and for ``unavailable`` the ``Retry-After`` it sent.
An answer without that envelope (a proxy's page, a crash) is raised by its status:
:class:`Unavailable` for 502, 503 and 504, :class:`ServerError` for any other 5xx, else
:class:`BoardError` itself.
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
        """The field the server named: its message is ``<field>: <problem>``."""
        return self.message.split(": ", 1)[0].strip()


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
    todo was reaped or taken over, or the lease token was not this lease's. Drop the work; do not
    report it again."""


class Paused(BoardError):
    """A claim while a team admin has paused this endpoint's claims (HTTP 423); the message says
    who. Reports still land. Claim again later: :class:`~board_client.Worker` waits it out."""

    code = "paused"


class TooLarge(BoardError):
    """The body is over the server's limit (``BOARD_MAX_BODY_BYTES``)."""

    code = "too_large"


class MethodNotAllowed(BoardError):
    """A verb called with another method than POST (the client never does)."""

    code = "method_not_allowed"


class Unavailable(BoardError):
    """The server or its database could not answer. ``retry_after`` is the server's ``Retry-After``
    in seconds (None when it sent none). ``outcome_unknown`` is True when the call may have landed
    although no answer said so: the connection broke after the request was sent, or a proxy
    answered 502 or 504; it is False for Board's own ``503``, which means nothing was written, and
    when the request never left (the connection was refused)."""

    code = "unavailable"

    def __init__(
        self,
        message: str,
        *,
        status: int = 503,
        request_id: str | None = None,
        retry_after: float | None = None,
        outcome_unknown: bool = False,
    ):
        super().__init__(message, status=status, request_id=request_id)
        self.retry_after = retry_after
        self.outcome_unknown = outcome_unknown


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
        Paused,
        TooLarge,
        MethodNotAllowed,
        Unavailable,
        ServerError,
    )
}
# Each code's HTTP status (docs/api.md, "Errors"): the status of an error met inside an answer
# (a report's ``next``), which has none of its own.
STATUS = {
    "invalid": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "too_large": 413,
    "paused": 423,
    "internal": 500,
    "unavailable": 503,
}
# The reports whose conflict means the lease is gone.
LEASE_VERBS = frozenset({"heartbeat", "complete", "fail", "release"})


def error_for(verb: str, status: int, body: object, request_id: str | None, retry_after: float | None) -> BoardError:
    """The exception for a refused call (``retry_after``: the header's; else the envelope's)."""
    detail = body.get("error") if isinstance(body, dict) else None
    code = detail.get("code") if isinstance(detail, dict) else None
    message = detail.get("message") if isinstance(detail, dict) else None
    if not isinstance(code, str):
        code = None
    if not isinstance(message, str):
        message = f"{verb}: HTTP {status} without an error body" if code is None else f"{verb}: {code}"
    if retry_after is None and isinstance(detail, dict):
        envelope = detail.get("retry_after")
        if isinstance(envelope, (int, float)) and not isinstance(envelope, bool) and envelope >= 0:
            retry_after = float(envelope)
    if code == "conflict" and verb in LEASE_VERBS:
        return LeaseLost(message, status=status, request_id=request_id)
    if code == "unavailable" or (code is None and status in (502, 503, 504)):
        return Unavailable(message, status=status, request_id=request_id, retry_after=retry_after)
    cls = BY_CODE.get(code or "", ServerError if status >= 500 else BoardError)
    error = cls(message, status=status, request_id=request_id)
    if code is not None and code not in BY_CODE:
        error.code = code  # a code this client does not know yet: kept as the server sent it
    return error

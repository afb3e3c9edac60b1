"""The API's own failures (the store's are in ``todos.core.errors``, the database's outage in
``todos.core.unavailable``) and every code's status."""

from __future__ import annotations

import uuid

from todos.core.errors import StoreError

# The error codes and their HTTP statuses (docs/api.md, "Errors").
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


class Unauthorized(StoreError):
    """Missing, unknown, revoked or expired bearer token."""

    code = "unauthorized"


class TooLarge(StoreError):
    """The request body is over ``BOARD_MAX_BODY_BYTES``."""

    code = "too_large"


class MethodNotAllowed(StoreError):
    """Verbs are POST only."""

    code = "method_not_allowed"


def new_request_id() -> str:
    """The id an answer carries in ``X-Request-Id`` (and an internal error in its message and the
    log line), the same shape for the API and MCP so one grep finds a request in the logs."""
    return uuid.uuid4().hex[:20]


def internal_message(request_id: str) -> str:
    """What an ``internal`` error says: only the request id, the details are in the log."""
    return f"internal error (request id {request_id})"


def error_body(code: str, message: str, *, retry_after: int | None = None) -> dict:
    """The error envelope; ``retry_after`` (seconds, as in the ``Retry-After`` header) only on
    ``unavailable``."""
    detail: dict = {"code": code, "message": message}
    if retry_after is not None:
        detail["retry_after"] = retry_after
    return {"error": detail}


# The 503 envelope, for the OpenAPI document: the error shape plus ``retry_after``.
UNAVAILABLE_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "const": "unavailable"},
                "message": {"type": "string"},
                "retry_after": {"type": "integer", "minimum": 0, "description": "seconds, as in Retry-After"},
            },
            "required": ["code", "message", "retry_after"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}

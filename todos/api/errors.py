"""The API's own failures (the store's are in ``todos.store.errors``, the database's outage in
``todos.unavailable``) and every code's status."""

from __future__ import annotations

from todos.store.errors import StoreError

# agent-api.md, "Transport": the error codes and their HTTP statuses.
STATUS = {
    "invalid": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "too_large": 413,
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

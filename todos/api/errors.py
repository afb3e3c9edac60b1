"""The API's own failures (the store's are in ``todos.store.errors``) and every code's status."""

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


def error_body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}

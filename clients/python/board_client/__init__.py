"""Board's agent API from Python: ``Client`` (sync) and ``AsyncClient``, one method per verb, and
``Worker`` to drain a queue with handlers. Depends on httpx only."""

from board_client._async_client import AsyncClient
from board_client._sync_client import Client
from board_client.errors import (
    BoardError,
    Conflict,
    Forbidden,
    Invalid,
    LeaseLost,
    MethodNotAllowed,
    NotFound,
    Paused,
    ServerError,
    TooLarge,
    Unauthorized,
    Unavailable,
)
from board_client.worker import Done, Fail, Job, Release, Worker

__all__ = [
    "AsyncClient",
    "BoardError",
    "Client",
    "Conflict",
    "Forbidden",
    "Invalid",
    "LeaseLost",
    "MethodNotAllowed",
    "NotFound",
    "Paused",
    "ServerError",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "Done",
    "Fail",
    "Job",
    "Release",
    "Worker",
]

"""PostgreSQL's ``'infinity'`` timestamp as Python reads it: :data:`NEVER`.

A blocked todo waits with ``next_retry_at = 'infinity'`` (docs/lifecycle.md, "Dependencies"),
which psycopg's own loaders refuse (no ``datetime`` is that late). Registered on psycopg's global
adapters when ``todos.core.db`` is imported, before any connection is made, so every connection
reads it as the latest instant a ``datetime`` can hold.
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader

NEVER = datetime.max.replace(tzinfo=UTC)
_BINARY_INFINITY = (2**63 - 1).to_bytes(8, "big")


class InfinityTimestamptzLoader(TimestamptzLoader):
    def load(self, data) -> datetime:
        if bytes(data) == b"infinity":
            return NEVER
        return super().load(data)


class InfinityTimestamptzBinaryLoader(TimestamptzBinaryLoader):
    def load(self, data) -> datetime:
        if bytes(data) == _BINARY_INFINITY:
            return NEVER
        return super().load(data)


def register() -> None:
    psycopg.adapters.register_loader("timestamptz", InfinityTimestamptzLoader)
    psycopg.adapters.register_loader("timestamptz", InfinityTimestamptzBinaryLoader)

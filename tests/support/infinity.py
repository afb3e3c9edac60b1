"""Raw reads of a blocked todo in the tests: PostgreSQL's ``'infinity'`` as :data:`NEVER`.

The product never lets ``'infinity'`` leave SQL (``todos.core.store.records.TODO_COLUMNS``), so
psycopg's C loaders read every timestamp. A test that reads a raw row (``SELECT * FROM todos``)
on its own connection registers these loaders on that connection only.
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader

NEVER = datetime.max.replace(tzinfo=UTC)
_BINARY_INFINITY = (2**63 - 1).to_bytes(8, "big")


class _Text(TimestamptzLoader):
    def load(self, data) -> datetime:
        return NEVER if bytes(data) == b"infinity" else super().load(data)


class _Binary(TimestamptzBinaryLoader):
    def load(self, data) -> datetime:
        return NEVER if bytes(data) == _BINARY_INFINITY else super().load(data)


def read_infinity(conn: psycopg.Connection) -> psycopg.Connection:
    """``conn``, reading ``'infinity'`` timestamps as :data:`NEVER`."""
    conn.adapters.register_loader("timestamptz", _Text)
    conn.adapters.register_loader("timestamptz", _Binary)
    return conn

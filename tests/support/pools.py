"""The store's pools rebuilt at a given size (and timeouts) for one test, and rebuilt again after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from todos.core import db


@contextmanager
def sized_pools(settings, size: int, **more) -> Iterator[None]:
    """Pools of exactly ``size`` connections; ``more`` sets other settings (``BOARD_DB_POOL_TIMEOUT=0.3``).
    ``settings`` is pytest-django's fixture, which restores every value after the test."""
    settings.BOARD_DB_POOL_MIN = size
    settings.BOARD_DB_POOL_MAX = size
    for name, value in more.items():
        setattr(settings, name, value)
    db.reset_pools()
    try:
        yield
    finally:
        db.reset_pools()

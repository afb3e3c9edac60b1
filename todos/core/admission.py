"""Who gets the next pooled connection when requests queue for one: work that finishes work first.

Past saturation an open-loop producer keeps sending creates whatever the server's pace, and a
pool hands its connections out first come, first served: the creates, many and concurrent, then
fill the queue, and the few workers' claims and completions wait behind them. Fewer completions
because more work arrived: the fall past the knee (docs/architecture.md, "Admission").

So each event loop's async pool sits behind a :class:`Gate` as wide as the pool. A request
names its :class:`Priority` (the agent API sets it per verb, :func:`prioritised`); when every
connection is taken, the next one freed goes to the most urgent waiter, oldest first within a
priority: a completion (which ends work) before a claim (which starts it) before a create
(which adds it). The excess of creates waits, and past ``BOARD_DB_POOL_TIMEOUT`` is refused with
503 and ``Retry-After``, the back-pressure an agent's producer should slow down on.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum

from todos.core.unavailable import BUSY, Unavailable


class Priority(IntEnum):
    """Lower goes first."""

    FINISH = 0  # complete, fail, release, heartbeat: ends or keeps a lease
    WORK = 1  # claims, reads, everything else
    CREATE = 2  # adds work


_current: ContextVar[Priority] = ContextVar("board_admission_priority", default=Priority.WORK)


def current() -> Priority:
    return _current.get()


@contextmanager
def prioritised(priority: Priority) -> Iterator[None]:
    """Run the block's database work at ``priority`` (the task's context: concurrent requests each
    keep their own)."""
    token = _current.set(priority)
    try:
        yield
    finally:
        _current.reset(token)


class Gate:
    """At most ``size`` holders; waiters admitted by (priority, arrival). One per event loop."""

    def __init__(self, size: int):
        self.size = size
        self.free = size
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    def waiting(self) -> int:
        return sum(1 for _, _, future in self._waiting if not future.done())

    async def acquire(self, priority: Priority, timeout: float) -> None:
        """Take a place, waiting at most ``timeout`` seconds (then :class:`Unavailable`, busy)."""
        if self.free > 0 and not self.waiting():
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (int(priority), next(self._arrivals), future))
        try:
            async with asyncio.timeout(timeout):
                await future
        except (TimeoutError, asyncio.CancelledError) as exc:
            if future.done() and not future.cancelled():
                self.release()  # admitted as we gave up: hand the place on
            else:
                future.cancel()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise Unavailable(BUSY) from None

    def release(self) -> None:
        """Give the place to the most urgent live waiter, or back to the free places."""
        while self._waiting:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():
                future.set_result(None)
                return
        self.free += 1

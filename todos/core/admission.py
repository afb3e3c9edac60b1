"""Who gets the next pooled connection when requests queue for one: turns by kind of work.

Past saturation an open-loop producer keeps sending creates whatever the server's pace, and a
pool hands its connections out first come, first served: the creates, many and concurrent, then
fill the queue, and the few workers' claims and completions wait behind them. Fewer completions
because more work arrived: the fall past the knee (docs/architecture.md, "Admission").

So each event loop's async pool sits behind a :class:`Gate` as wide as the pool. A request
names its :class:`Priority` (the agent API sets it per verb, :func:`prioritised`): a completion
(which ends work), a claim (which starts it) or a create (which adds it). When every connection
is taken, the kinds that wait take turns for the next one freed, in that order, oldest first
within a kind. A job is one of each, so past saturation creates are let in as fast as work is
finished and the excess waits; below it, a create never waits behind a stream of the workers'
requests (strict precedence starved them: seconds at half the saturation rate). The excess of
creates waits, and past ``BOARD_DB_POOL_TIMEOUT`` is refused with 503 and ``Retry-After``, the
back-pressure an agent's producer should slow down on.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum

from todos.core.unavailable import BUSY, Unavailable


class Priority(IntEnum):
    """The kinds of work that take turns at the gate, in turn order."""

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
    """At most ``size`` holders; when they are all taken, waiters are let in by turns of
    :class:`Priority` (each kind that waits, in order), oldest first within a kind. One per event
    loop."""

    def __init__(self, size: int):
        self.size = size
        self.free = size
        self._waiting: dict[Priority, deque[asyncio.Future[None]]] = {p: deque() for p in Priority}
        self._turn = 0  # index into TURNS of the kind whose turn is next

    def waiting(self) -> int:
        return sum(1 for queue in self._waiting.values() for future in queue if not future.done())

    async def acquire(self, priority: Priority, timeout: float) -> None:
        """Take a place, waiting at most ``timeout`` seconds (then :class:`Unavailable`, busy)."""
        if self.free > 0 and not self.waiting():
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[Priority(priority)].append(future)
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
        """Give the place to the oldest live waiter of the next kind in turn, or back to the free
        places."""
        for step in range(len(TURNS)):
            kind = TURNS[(self._turn + step) % len(TURNS)]
            queue = self._waiting[kind]
            while queue:
                future = queue.popleft()
                if not future.done():
                    future.set_result(None)
                    self._turn = (TURNS.index(kind) + 1) % len(TURNS)
                    return
        self.free += 1


TURNS = tuple(Priority)  # FINISH, WORK, CREATE

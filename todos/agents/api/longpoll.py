"""``claim_next`` with ``wait_seconds``: hold the request until work arrives, holding no connection.

The store NOTIFYs ``board_ready`` with ``{"endpoint", "queue", "n"}`` whenever ``n`` todos become
claimable (create, release, requeue, reap, retry); a resumed queue or a raised concurrency limit
sends no ``n``, as the number is unknown. The process's one LISTEN connection
(``todos.live.listener``) hands each notification to :class:`ReadyWaiters`, which wakes ``n`` of
the waiters registered for that endpoint and queue (all of them when ``n`` is absent), the
longest-waiting first. A woken waiter retries its claim. Waking every waiter for each new todo
would make a whole herd of claim statements race for one row; under load that cost more than the
work itself (docs/architecture.md, "Long polls").

A waiter whose claim is already running when its work arrives may miss it (its statement's
snapshot came first), so a notification prefers idle waiters and otherwise marks a running one to
try once more at once. A waiter that leaves with a wake it never used (its deadline, its client
hung up, it found other work) passes the wake on. Because a notification can still be lost (the
LISTEN connection drops, or the change happened in a way that sent none), every wait is also cut
every :data:`RECHECK_SECONDS` to try again anyway, and every :data:`DOWN_RECHECK_SECONDS` while
the LISTEN connection is down.

A claim that arrives while its queues are *known empty* waits without looking first. Known empty:
a look (a claim statement) at them found nothing less than :data:`QUIET_SECONDS` ago, and every
notification since was handed to a waiter, who will claim that work. Otherwise a worker coming
back from a completion would run one claim statement that finds nothing (the waiter woken for the
new todo took it) before every claim that finds something: under load, half the claim statements
were misses. Any notification that finds too few waiters, a lost wake, a reconnect, or the mark's
age sends the next arrival to look again; so does any claim that presents capabilities (a todo
that requires some is announced to waiters that may not be able to take it).

Between claim attempts the request holds no database connection and no thread: only an
``asyncio.Event`` in a dictionary, removed in ``finally`` whatever ends the wait (work, deadline,
the client hanging up, or cancellation).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from todos.core.circuit import CIRCUIT
from todos.core.store.fragments import READY_CHANNEL
from todos.live.listener import Listener, get_listener

T = TypeVar("T")

RECHECK_SECONDS = 5.0
# ...and while the LISTEN connection is down (no notification can arrive), this often.
DOWN_RECHECK_SECONDS = 0.5
# How long an empty look stands for its queues (work no notification announces, a lapsed lease or
# a retry come due, is announced by the loops' sweeps; this bounds how long an arrival trusts it).
QUIET_SECONDS = 1.0
# Past this many queues remembered, the marks and spoils are forgotten (every arrival looks once).
REMEMBERED_MAX = 10_000
# A wait for a rate key's refill ends this much after it (the database's clock and ours differ).
REFILL_SLACK_SECONDS = 0.002
# How long a first long poll waits for the LISTEN connection before it claims anyway.
CONNECT_WAIT_SECONDS = 2.0


@dataclass(eq=False)
class Waiter:
    endpoint: str
    queues: frozenset[str]
    event: asyncio.Event = field(default_factory=asyncio.Event)
    # True while its claim statement runs; a wake then means "try once more at once".
    claiming: bool = False
    # The queue of the unused wake it holds (None: none, or a wake-all that needs no passing on).
    woken_for: str | None = None


@dataclass(frozen=True)
class Look:
    """A claim statement about to run: its queues, and the registry's clock when it started."""

    endpoint: str
    queues: frozenset[str]
    tick: int
    at: float


class ReadyWaiters:
    """The waiters of one listener (one per event loop), keyed by endpoint id, oldest first; and
    which (endpoint, queue) pairs are known empty."""

    def __init__(self, listener: Listener):
        self._by_endpoint: dict[str, dict[Waiter, None]] = defaultdict(dict)
        self._listener = listener
        # (endpoint, queue) -> when a look that found nothing there started (loop time).
        self._quiet: dict[tuple[str, str], float] = {}
        # (endpoint, queue) -> the tick of the last notification there that no waiter took; a look
        # started before it may have missed that work. _floor: the same for every pair.
        self._spoiled: dict[tuple[str, str], int] = {}
        self._tick = 0
        self._floor = 0
        listener.subscribe(READY_CHANNEL, self._ready)
        # Notifications sent while the connection was down are gone: everyone re-checks.
        listener.on_reconnect(self._wake_all)

    def look(self, endpoint_id: object, queues: Iterable[str]) -> Look:
        """Note a claim statement about to run (before its snapshot is taken)."""
        self._tick += 1
        return Look(str(endpoint_id), frozenset(queues), self._tick, asyncio.get_running_loop().time())

    def found_nothing(self, look: Look) -> None:
        """``look`` found nothing: its queues are known empty, unless work was announced meanwhile
        that no waiter took, or the listener is not live (notifications may be missed)."""
        if look.tick <= self._floor or self._listener.state != "live":
            return
        if len(self._quiet) >= REMEMBERED_MAX:
            self._quiet.clear()
        for queue in look.queues:
            key = (look.endpoint, queue)
            if self._spoiled.get(key, 0) < look.tick:
                self._quiet[key] = max(self._quiet.get(key, look.at), look.at)

    def known_empty(self, endpoint_id: object, queues: Iterable[str]) -> bool:
        """Whether a claim of ``queues`` would find nothing that no waiter is already woken for."""
        if self._listener.state != "live":
            return False
        now = asyncio.get_running_loop().time()
        endpoint = str(endpoint_id)
        marks = [self._quiet.get((endpoint, queue)) for queue in queues]
        return bool(marks) and all(at is not None and now - at < QUIET_SECONDS for at in marks)

    def _spoil(self, endpoint: str, queue: str) -> None:
        """Work was announced in ``queue`` that no waiter took: the next arrival must look."""
        self._tick += 1
        key = (endpoint, queue)
        self._quiet.pop(key, None)
        if len(self._spoiled) >= REMEMBERED_MAX:
            self._spoiled.clear()
            self._floor = self._tick
        self._spoiled[key] = self._tick

    def _spoil_all(self) -> None:
        self._tick += 1
        self._floor = self._tick
        self._quiet.clear()
        self._spoiled.clear()

    def add(self, endpoint_id: object, queues: Iterable[str]) -> Waiter:
        waiter = Waiter(str(endpoint_id), frozenset(queues))
        self._by_endpoint[waiter.endpoint][waiter] = None
        return waiter

    def remove(self, waiter: Waiter) -> None:
        """Forget ``waiter``; a wake it holds unused goes to another waiter of its queue."""
        waiters = self._by_endpoint.get(waiter.endpoint)
        if waiters is not None:
            waiters.pop(waiter, None)
            if not waiters:
                del self._by_endpoint[waiter.endpoint]
        if waiter.woken_for is not None and waiter.event.is_set():
            if not self.wake(waiter.endpoint, waiter.woken_for, 1):
                self._spoil(waiter.endpoint, waiter.woken_for)
        waiter.woken_for = None

    def count(self) -> int:
        return sum(len(w) for w in self._by_endpoint.values())

    def wake(self, endpoint: str, queue: str, n: int) -> int:
        """Wake up to ``n`` waiters of ``endpoint`` that wait on ``queue``: idle ones first (oldest
        first), then ones whose claim is running. Returns how many were woken."""
        candidates = [w for w in self._by_endpoint.get(endpoint, {}) if queue in w.queues and not w.event.is_set()]
        chosen = [w for w in candidates if not w.claiming][:n]
        if len(chosen) < n:
            chosen += [w for w in candidates if w.claiming][: n - len(chosen)]
        for waiter in chosen:
            waiter.woken_for = queue
            waiter.event.set()
        return len(chosen)

    def _ready(self, payload: dict) -> None:
        endpoint, queue, n = str(payload.get("endpoint")), payload.get("queue"), payload.get("n")
        if not isinstance(queue, str):
            return
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            if self.wake(endpoint, queue, n) < n:
                self._spoil(endpoint, queue)
            return
        self._spoil(endpoint, queue)
        for waiter in list(self._by_endpoint.get(endpoint, ())):
            if queue in waiter.queues:
                waiter.woken_for = None
                waiter.event.set()

    def _wake_all(self) -> None:
        self._spoil_all()
        for waiters in self._by_endpoint.values():
            for waiter in waiters:
                waiter.woken_for = None
                waiter.event.set()


_registries: weakref.WeakKeyDictionary[Listener, ReadyWaiters] = weakref.WeakKeyDictionary()


def ready_waiters() -> tuple[Listener, ReadyWaiters]:
    """This event loop's listener (started if need be) and its waiters."""
    listener = get_listener()
    registry = _registries.get(listener)
    if registry is None:
        registry = _registries[listener] = ReadyWaiters(listener)
    return listener, registry


async def claim_with_wait(
    attempt: Callable[[], Awaitable[T | None]],
    *,
    endpoint_id: object,
    queues: Iterable[str],
    wait_seconds: float,
    gone: asyncio.Event | None = None,
    plain: bool = True,
    refill: Callable[[], float | None] = lambda: None,
) -> T | None:
    """Run ``attempt`` (a claim: its result, or None when nothing is claimable) until it finds work,
    ``wait_seconds`` pass, or ``gone`` is set (the client hung up). Returns None when empty.

    ``plain``: the claim takes any announced todo of its queues (it presents no capabilities), so
    its empty looks mark the queues known empty, and it may skip its first look while they are.

    ``refill``: after an empty look, in how many seconds a throttled rate key of the endpoint's
    pending work gets an allowance back (None: none is throttled). The wait ends then, so rate-limited
    work is claimed as soon as it may be; such a look marks nothing known empty."""
    if wait_seconds <= 0:
        return await attempt()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_seconds
    listener, registry = ready_waiters()
    queues = frozenset(queues)
    # Register before the first attempt: work created between a miss and the wait still wakes us.
    waiter = registry.add(endpoint_id, queues)
    try:
        if listener.state != "live":
            CIRCUIT.check()  # the database is known down: say so now, not after waiting for its listener
            await listener.wait_connected(timeout=min(CONNECT_WAIT_SECONDS, wait_seconds))
        skip = plain and registry.known_empty(endpoint_id, queues)
        refill_in: float | None = None
        while True:
            if skip:
                skip = False  # wait first: a waiter is already woken for everything announced
            else:
                waiter.event.clear()
                waiter.woken_for = None
                waiter.claiming = True
                look = registry.look(endpoint_id, queues)
                try:
                    found = await attempt()
                finally:
                    waiter.claiming = False
                if found is not None:
                    return found
                refill_in = refill()
                if plain and refill_in is None:
                    registry.found_nothing(look)
            remaining = deadline - loop.time()
            if remaining <= 0 or (gone is not None and gone.is_set()):
                return None
            recheck = RECHECK_SECONDS if listener.state == "live" else DOWN_RECHECK_SECONDS
            if refill_in is not None:
                recheck = min(recheck, refill_in + REFILL_SLACK_SECONDS)
            await _first_of(waiter.event, gone, timeout=min(remaining, recheck))
            if gone is not None and gone.is_set():
                return None
    finally:
        registry.remove(waiter)


async def _first_of(event: asyncio.Event, gone: asyncio.Event | None, *, timeout: float) -> None:
    """Wait until ``event`` or ``gone`` is set, or ``timeout`` seconds pass."""
    waits = [asyncio.ensure_future(event.wait())]
    if gone is not None:
        waits.append(asyncio.ensure_future(gone.wait()))
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()

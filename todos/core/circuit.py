"""Fail fast while the database is unreachable: one circuit per process.

Without it, every request of an outage waits ``BOARD_DB_POOL_TIMEOUT`` for a pooled connection
that cannot come before it is answered 503. The circuit opens on the first connection attempt of
the store's pools that fails in a way that says nothing connects (:func:`~todos.core.unavailable.
unreachable`); while it is open a request asks for no connection and is refused at once, and the
requests already waiting for one are refused too. A background thread then tries one connection
every :data:`PROBE_INTERVAL_SECONDS`; the first that succeeds, the probe's or a pool's, closes it.
Meanwhile the pools' own attempts to replace their lost connections are put off until it closes
(:meth:`Circuit.defer`) instead of backing off for seconds: the probe alone knocks on the
database's door, and the pools refill the moment it answers.

What does not open it: a statement timeout, a busy pool, a pooled connection the server hung up
on (its replacement connects), a server that answers a connection attempt with a refusal of its
own. The state is the process's view of the database's health, so one circuit serves the sync
pool and every event loop's async pool. docs/guarantees.md says what clients see.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Protocol

from todos.core.unavailable import UNREACHABLE, Unavailable, describe, unreachable

logger = logging.getLogger(__name__)

PROBE_INTERVAL_SECONDS = 0.5
# The first probe comes sooner: a blip (one attempt refused while the server is up) then keeps
# the circuit open for about this long, not a whole interval.
FIRST_PROBE_SECONDS = 0.1


class Waiters(Protocol):
    """A pool whose requests waiting for a connection can be refused (:meth:`fail_waiting`)."""

    def fail_waiting(self) -> None: ...


class Circuit:
    """Closed: requests ask the pools for connections. Open: they are refused with
    :class:`~todos.core.unavailable.Unavailable` until a connection attempt succeeds."""

    def __init__(self, probe_interval: float = PROBE_INTERVAL_SECONDS, first_probe: float = FIRST_PROBE_SECONDS):
        self.probe_interval = probe_interval
        self.first_probe = first_probe
        self.openings = 0  # how many times it opened (for the log and the tests)
        self._lock = threading.Lock()
        self._open = False  # read without the lock: one attribute read per request
        self._opened_at = 0.0
        self._last_connected = float("-inf")
        self._cause: BaseException | None = None
        self._probe: Callable[[], object] | None = None
        self._probing = False
        self._watched: weakref.WeakSet = weakref.WeakSet()
        self._deferred: list[Callable[[], object]] = []

    @property
    def is_open(self) -> bool:
        return self._open

    def check(self) -> None:
        """Refuse at once while the circuit is open."""
        if self._open:
            raise self.refusal()

    def refusal(self) -> Unavailable:
        """A fresh :class:`Unavailable` whose cause is the last failed attempt (for the log)."""
        refused = Unavailable(UNREACHABLE)
        refused.__cause__ = self._cause
        return refused

    def watch(self, waiters: Waiters) -> None:
        """Have ``waiters``' waiting requests refused whenever the circuit opens."""
        self._watched.add(waiters)

    def defer(self, callback: Callable[[], object]) -> bool:
        """Keep ``callback`` to be called (in the thread that closes the circuit) once it closes,
        and say True; say False and keep nothing while it is closed."""
        with self._lock:
            if not self._open:
                return False
            self._deferred.append(callback)
            return True

    def connect_failed(self, exc: BaseException, started: float, probe: Callable[[], object]) -> None:
        """A connection attempt begun at ``started`` (``time.monotonic()``) failed with ``exc``;
        ``probe`` makes another attempt like it (and raises if it fails)."""
        if not unreachable(exc):
            return
        with self._lock:
            if self._last_connected >= started:
                return  # another attempt connected after this one began: the database answers
            self._cause = exc
            self._probe = probe
            if self._open:
                return
            self._open = True
            self.openings += 1
            self._opened_at = time.monotonic()
            start_probing = not self._probing
            self._probing = True
        logger.warning("database unreachable (%s): refusing requests until a connection succeeds", describe(exc))
        for waiters in list(self._watched):
            waiters.fail_waiting()
        if start_probing:
            threading.Thread(target=self._probe_until_closed, name="board-db-probe", daemon=True).start()

    def connected(self, started: float) -> None:
        """A connection attempt begun at ``started`` succeeded: the database answers. One begun
        before the circuit opened proves nothing about now (the server may have gone since it
        answered), so only the later ones close it."""
        finished = time.monotonic()
        with self._lock:
            self._last_connected = max(self._last_connected, finished)
            if not self._open or started < self._opened_at:
                return
            outage = finished - self._opened_at
            deferred = self._close()
        logger.warning("database reachable again; the circuit was open for %.1f s", outage)
        _call_each(deferred)

    def reset(self) -> None:
        """Closed, and nothing remembered (tests; :func:`todos.core.db.reset_pools`)."""
        with self._lock:
            deferred = self._close()
            self._cause = None
            self._probe = None
            self._last_connected = float("-inf")
        _call_each(deferred)

    def _close(self) -> list[Callable[[], object]]:
        self._open = False
        deferred, self._deferred = self._deferred, []
        return deferred

    def _probe_until_closed(self) -> None:
        delay = self.first_probe
        while True:
            time.sleep(delay)
            delay = self.probe_interval
            with self._lock:
                if not self._open or self._probe is None:
                    self._probing = False
                    return
                probe = self._probe
            started = time.monotonic()
            try:
                probe()
            except Exception as exc:  # noqa: BLE001 - any failure is the probe's answer
                if unreachable(exc):
                    with self._lock:
                        if self._last_connected < started:
                            self._cause = exc
                    continue
                # The server answered, with a refusal of its own: it is reachable.
            self.connected(started)


def _call_each(callbacks: list[Callable[[], object]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:  # noqa: BLE001 - one failing callback must not stop the others
            logger.exception("a callback deferred until the database answered failed")


CIRCUIT = Circuit()

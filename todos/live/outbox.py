"""Per-client coalescing: at most one ``changed`` message per interval, the latest state winning.

Changes accumulate as ordered sets (ids, queues, ops, teams) and leave as one message when the
client's token bucket allows: one token per ``interval`` (~15 a second), at most ``burst`` (2)
saved up. So a change after a quiet period goes out at once, a continuous stream leaves at most
``1/interval`` messages a second (plus the burst), and what arrives meanwhile leaves together. A
message only names what changed, so merging loses nothing: the page fetches the current
fragments, whatever happened in between.

Why a bucket rather than a fixed gap since the previous message: the fan-out already merges a
team's notifications into at most one message per ``interval``, and those arrive here with a few
milliseconds of jitter. With a fixed gap, each early arrival had to wait for the gap, and the wait
carried over to every later message (a send time is the later of its arrival and the previous
send plus the gap, so the lag is the largest jitter seen so far; bench/README.md, "Live latency").
The spare token absorbs the jitter; the rate stays bounded.

``resync`` and ``status`` are control messages: sent as soon as possible, in order. A resync
discards the accumulated changes, because the page is about to re-fetch everything anyway.

When a burst touches more than ``max_ids`` todos the message carries ``"overflow": true`` and no
ids: the page refreshes every row it shows instead of receiving a list longer than its page.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

# Seconds per token: at most ~15 changed messages a second per client (a burst is coalesced to
# about ten).
# Why not 0.1: under a steady stream a change waits for the next message, on average half the
# interval, and at 0.1 that alone would spend the whole median latency budget before the relay and
# the fan-out add theirs (the figures per interval: bench/README.md, "Live latency").
INTERVAL = 0.065
BURST = 2  # messages a quiet client may send back to back
MAX_IDS = 200


class Outbox:
    def __init__(
        self,
        send: Callable[[dict | str], Awaitable[None]],
        *,
        interval: float = INTERVAL,
        burst: int = BURST,
        max_ids: int = MAX_IDS,
    ):
        self._send = send
        self.interval = interval
        self.burst = burst
        self.max_ids = max_ids
        self._ids: dict = {}
        self._queues: dict = {}
        self._ops: dict = {}
        self._teams: dict = {}
        self._overflow = False
        self._control: deque[dict] = deque()
        self._wake = asyncio.Event()
        self._sending = asyncio.Lock()  # one message at a time, in order, from either path below
        self._idle = False  # the task is waiting for work: push() may send in its place
        self._tokens = float(burst)
        self._refilled = asyncio.get_running_loop().time()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="board-live-outbox")
        self.sent = 0  # changed messages sent (tests and the benchmark)

    def add(self, *, ids=(), queues=(), ops=(), teams=()) -> None:
        self._merge(ids, queues, ops, teams)
        self._wake.set()

    def _merge(self, ids, queues, ops, teams) -> None:
        if not self._overflow:
            self._ids.update(dict.fromkeys(ids))
            if len(self._ids) > self.max_ids:
                self._overflow = True
                self._ids.clear()
        self._queues.update(dict.fromkeys(queues))
        self._ops.update(dict.fromkeys(ops))
        self._teams.update(dict.fromkeys(teams))

    async def push(self, *, ids=(), queues=(), ops=(), teams=(), text: str | None = None) -> None:
        """``add``, then send at once from the caller's task if nothing is queued and a token is
        there. Handing the message to the outbox's own task instead costs one more task wake-up
        per client; with 100 tabs, the tab served first waited for all 100 consumers to run
        before its frame left.

        ``text``, if given, is this change already encoded as the ``changed`` message would
        encode it (the fan-out encodes each team message once for all its tabs); it is sent as
        is when nothing else was waiting to be merged with it."""
        alone = not self._ops
        self._merge(ids, queues, ops, teams)
        inline = (
            self._idle
            and not self._control
            and not self._sending.locked()
            and self._wait_for_token(asyncio.get_running_loop().time()) == 0
        )
        if not inline:
            self._wake.set()  # the task sends it when the bucket allows
            return
        async with self._sending:
            taken = self._take()
            if taken is None:
                return  # nothing changed (a push without ops): as in _flush, nothing to send
            message: dict | str = text if text is not None and alone and "overflow" not in taken else taken
            self._tokens -= 1
            self.sent += 1
            try:
                await self._send(message)
            except Exception:  # noqa: BLE001 - as in the task: the socket went away under us
                logger.info("live outbox: sending failed", exc_info=True)

    def control(self, message: dict) -> None:
        self._control.append(message)
        self._wake.set()

    def resync(self, *, left_team: bool = False) -> None:
        """Drop what is queued and tell the page to re-fetch; ``left_team``: because the human
        lost a team (the page says so once and re-reads its list whole, rather than each row
        answering 404)."""
        self._clear()
        self.control({"type": "resync", "left_team": True} if left_team else {"type": "resync"})

    async def close(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass

    @property
    def pending(self) -> bool:
        return bool(self._ops)

    @property
    def backlog(self) -> int:
        """Control messages not yet handed to the socket."""
        return len(self._control)

    def _clear(self) -> None:
        self._ids, self._queues, self._ops, self._teams = {}, {}, {}, {}
        self._overflow = False

    def _take(self) -> dict | None:
        if not self._ops:
            return None
        message = {
            "type": "changed",
            "ids": list(self._ids),
            "queues": list(self._queues),
            "ops": list(self._ops),
            "teams": list(self._teams),
        }
        if self._overflow:
            message["overflow"] = True
        self._clear()
        return message

    async def _run(self) -> None:
        try:
            await self._loop()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the socket went away under us; the consumer cleans up
            logger.info("live outbox stopped: sending failed", exc_info=True)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._idle = True
            await self._wake.wait()
            self._idle = False
            self._wake.clear()
            async with self._sending:
                await self._flush(loop)

    async def _flush(self, loop) -> None:
        while self._control:
            await self._send(self._control.popleft())
        if self._ops:
            wait = self._wait_for_token(loop.time())
            if wait > 0:
                await asyncio.sleep(wait)
                while self._control:  # a resync that came meanwhile goes first (and cleared us)
                    await self._send(self._control.popleft())
            message = self._take()
            if message is not None:
                self._wait_for_token(loop.time())
                self._tokens -= 1
                self.sent += 1
                await self._send(message)

    def _wait_for_token(self, now: float) -> float:
        """Refill the bucket up to ``now``; the seconds until it holds a whole token (0: it does)."""
        if self.interval <= 0:
            self._tokens = float(self.burst)
            return 0.0
        self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) / self.interval)
        self._refilled = now
        return max(0.0, (1.0 - self._tokens) * self.interval)

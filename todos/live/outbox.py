"""Per-client coalescing: at most one ``changed`` message per interval, the latest state winning.

Changes accumulate as ordered sets (ids, queues, ops, teams). The first change after a quiet
period goes out at once (no added latency when the queue is calm); later ones wait until
``interval`` has passed since the previous message and leave together. A message only names what
changed, so merging loses nothing: the page fetches the current fragments, whatever happened in
between.

``resync`` and ``status`` are control messages: sent as soon as possible, in order. A resync
discards the accumulated changes, because the page is about to re-fetch everything anyway.

When a burst touches more than ``max_ids`` todos the message carries ``"overflow": true`` and no
ids: the page refreshes every row it shows instead of receiving a list longer than its page.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Awaitable, Callable

logger = logging.getLogger(__name__)

INTERVAL = 0.1  # seconds: at most ~10 changed messages per second per client
MAX_IDS = 200


class Outbox:
    def __init__(self, send: Callable[[dict], Awaitable[None]], *, interval: float = INTERVAL, max_ids: int = MAX_IDS):
        self._send = send
        self.interval = interval
        self.max_ids = max_ids
        self._ids: dict = {}
        self._queues: dict = {}
        self._ops: dict = {}
        self._teams: dict = {}
        self._overflow = False
        self._control: deque[dict] = deque()
        self._wake = asyncio.Event()
        self._last = float("-inf")  # loop time of the previous changed message
        self._task = asyncio.get_running_loop().create_task(self._run(), name="board-live-outbox")
        self.sent = 0  # changed messages sent (tests and the benchmark)

    def add(self, *, ids=(), queues=(), ops=(), teams=()) -> None:
        if not self._overflow:
            self._ids.update(dict.fromkeys(ids))
            if len(self._ids) > self.max_ids:
                self._overflow = True
                self._ids.clear()
        self._queues.update(dict.fromkeys(queues))
        self._ops.update(dict.fromkeys(ops))
        self._teams.update(dict.fromkeys(teams))
        self._wake.set()

    def control(self, message: dict) -> None:
        self._control.append(message)
        self._wake.set()

    def resync(self) -> None:
        self._clear()
        self.control({"type": "resync"})

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
            await self._wake.wait()
            self._wake.clear()
            while self._control:
                await self._send(self._control.popleft())
            if self._ops:
                wait = self._last + self.interval - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                    while self._control:  # a resync that came meanwhile goes first (and cleared us)
                        await self._send(self._control.popleft())
                message = self._take()
                if message is not None:
                    self._last = loop.time()
                    self.sent += 1
                    await self._send(message)

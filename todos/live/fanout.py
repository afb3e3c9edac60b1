"""From the process's listener to its websocket consumers, through the channel layer.

Each ``board_events`` notification names one team. The fan-out forwards it to that team's group
(``team.<uuid hex>``), so only consumers whose human belongs to the team receive it; a membership
change that names a human also goes to that human's group. Listener recovery and state changes go
to every consumer (``live.all``): a resync after a gap, and the indicator's state.

Notifications are merged per team before they enter the layer, with the same leading-edge window
per team as each client's outbox (``BOARD_LIVE_COALESCE_SECONDS``): the first after a quiet window leaves
at once (on the next loop turn, so a batch from one socket read still travels as one message);
the rest of a busy window leave together when it ends. Without this, every notification would
cost one dispatch in every consumer of the team: 200 transitions/s × 100 tabs is 20 000
dispatches a second, which one Board process cannot do (measured: latency grew without bound, to
seconds); merged, it is at most one per window per tab, whatever the rate. It adds no wait the
outbox would not impose anyway, and it keeps the in-memory layer's per-consumer queues (100
messages; overflowing ones are dropped silently) far from full.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from uuid import UUID

from channels.layers import BaseChannelLayer
from django.conf import settings

from todos.live.groups import EVERYONE, team_group, user_group
from todos.live.layer import configured_layer
from todos.live.listener import Listener, get_listener
from todos.live.messages import BOARD_CHANNEL

logger = logging.getLogger(__name__)


class _Batch:
    """One team's merged notifications: ordered sets of ids, queues, ops, endpoints and users."""

    __slots__ = ("team", "ids", "queues", "ops", "endpoints", "users")

    def __init__(self, team: str):
        self.team = team
        self.ids: dict = {}
        self.queues: dict = {}
        self.ops: dict = {}
        self.endpoints: dict = {}
        self.users: dict = {}

    def add(self, event: dict) -> None:
        self.ops[event["op"]] = None
        for key in ("ids", "queues", "endpoints"):
            values = event.get(key) or ()
            if isinstance(values, list):
                getattr(self, key).update(dict.fromkeys(v for v in values if isinstance(v, (str, int))))
        user = event.get("user")
        if isinstance(user, int) and not isinstance(user, bool):
            self.users[user] = None

    def message(self) -> dict:
        ids, queues, ops = list(self.ids), list(self.queues), list(self.ops)
        return {
            "type": "board.changed",
            "team": self.team,
            "ids": ids,
            "queues": queues,
            "ops": ops,
            "endpoints": list(self.endpoints),
            "users": list(self.users),
            # The browser's message, encoded once here rather than once per tab (it was 8% of the
            # server's time with 100 tabs of one team); see Outbox.push.
            "text": json.dumps({"type": "changed", "ids": ids, "queues": queues, "ops": ops, "teams": [self.team]}),
        }


class FanOut:
    """Subscribes to the listener once per process and feeds the channel layer."""

    def __init__(self, listener: Listener, layer: BaseChannelLayer | None = None, *, interval: float | None = None):
        self.listener = listener
        self.layer = layer or configured_layer()
        self.interval = settings.BOARD_LIVE_COALESCE_SECONDS if interval is None else interval
        self._last_flush: dict[str, float] = {}  # team -> loop time of its last message
        self._pending: dict[str, _Batch] = {}  # a team is here iff its flush is scheduled
        self._timers: dict[str, asyncio.Handle] = {}
        self._outbox: deque[tuple[str, dict]] = deque()
        self._sender: asyncio.Task | None = None
        self._unsubscribe = [
            listener.subscribe(BOARD_CHANNEL, self._collect),
            listener.on_reconnect(self._resync),
            listener.on_state(self._state),
        ]

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._sender is not None:
            self._sender.cancel()

    # --- listener callbacks (synchronous, in the event loop) ------------------------------------

    def _collect(self, event: dict) -> None:
        op, team = event.get("op"), event.get("team")
        try:
            team = str(UUID(str(team)))
        except ValueError:
            logger.error("ignoring a board notification without a valid team: %.200r", event)
            return
        if not isinstance(op, str):
            logger.error("ignoring a board notification without an op: %.200r", event)
            return
        batch = self._pending.get(team)
        if batch is None:
            batch = self._pending[team] = _Batch(team)
            loop = self.listener.loop
            wait = self._last_flush.get(team, float("-inf")) + self.interval - loop.time()
            if wait > 0:
                self._timers[team] = loop.call_later(wait, self._flush, team)
            else:
                self._timers[team] = loop.call_soon(self._flush, team)
        batch.add(event)

    def _resync(self) -> None:
        self._enqueue(EVERYONE, {"type": "board.resync"})

    def _state(self, state: str) -> None:
        self._enqueue(EVERYONE, {"type": "board.status", "state": state})

    # --- into the layer ------------------------------------------------------------------------

    def _flush(self, team: str) -> None:
        batch = self._pending.pop(team)
        self._timers.pop(team, None)
        self._last_flush[team] = self.listener.loop.time()
        message = batch.message()
        self._enqueue(team_group(team), message)
        for user in batch.users:
            self._enqueue(user_group(user), message)

    def _enqueue(self, group: str, message: dict) -> None:
        """Send in arrival order from a single task (group_send is a coroutine; the listener's
        callbacks are not)."""
        self._outbox.append((group, message))
        if self._sender is None or self._sender.done():
            self._sender = self.listener.loop.create_task(self._send(), name="board-live-fanout")

    async def _send(self) -> None:
        while self._outbox:
            group, message = self._outbox.popleft()
            try:
                await self.layer.group_send(group, message)
            except Exception:  # noqa: BLE001 - one failed send must not stop the fan-out
                logger.exception("live fan-out to %s failed", group)


_fanouts: dict[asyncio.AbstractEventLoop, FanOut] = {}


def get_fanout() -> FanOut:
    """The process's fan-out for the running loop (and its listener), started on first use."""
    loop = asyncio.get_running_loop()
    for stale in [other for other in _fanouts if other.is_closed()]:
        del _fanouts[stale]
    listener = get_listener()
    fanout = _fanouts.get(loop)
    if fanout is None or fanout.listener is not listener:
        if fanout is not None:
            fanout.close()
        fanout = _fanouts[loop] = FanOut(listener)
    return fanout


async def stop_live() -> None:
    """Stop this loop's fan-out and listener (tests; a server just exits)."""
    from todos.live.listener import current_listener

    loop = asyncio.get_running_loop()
    fanout = _fanouts.pop(loop, None)
    if fanout is not None:
        fanout.close()
    listener = current_listener()
    if listener is not None:
        await listener.stop()

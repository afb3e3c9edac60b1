"""Channels' in-memory layer, made to scale with the number of open Board tabs.

Still the in-memory layer (one process, no Redis: PostgreSQL is the bus between processes), with
three costs of the stock class removed. Each grows with the number of sockets *per message*, so a
broadcast to N tabs cost O(N²):

- ``_clean_expired`` (expired messages, expired group members) walks every channel and every group
  member, and the stock class runs it on every ``receive`` and every ``group_send``. Here it runs
  at most once a second: expiry is measured in seconds (60 s messages, a day for group members).
- ``send`` deep-copies the message for every recipient. Here a shallow copy: Board's consumers
  never mutate what they receive (the lists inside are shared, read-only).
- ``group_send`` creates a task per member and waits for them all; ``send`` never waits (the
  queues are unbounded to asyncio and full ones raise at once), so here a plain loop.

Measured with 100 tabs of one team and 20 transitions a second (``bench/live_latency.py``'s
set-up, in process): the stock layer spent 1.35 s of CPU in ``_clean_expired`` and 0.8 s in
``deepcopy`` over 6 s, more than the rest of the pipeline together.

A message dropped because a consumer's queue is full is logged here; the stock class drops it
silently.
"""

from __future__ import annotations

import asyncio
import logging
import time

from channels import DEFAULT_CHANNEL_LAYER
from channels.exceptions import ChannelFull
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

CLEAN_EVERY = 1.0  # seconds


class BoardChannelLayer(InMemoryChannelLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._last_clean = float("-inf")

    def _clean_expired(self):
        now = time.monotonic()
        if now - self._last_clean < CLEAN_EVERY:
            return
        self._last_clean = now
        # typeshed's channels stub leaves out this private method of the stock layer, which exists
        super()._clean_expired()  # pyright: ignore[reportAttributeAccessIssue]

    async def send(self, channel, message):
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self.channels.setdefault(channel, asyncio.Queue(maxsize=self.get_capacity(channel)))
        try:
            queue.put_nowait((time.time() + self.expiry, dict(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def group_send(self, group, message):
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            try:
                await self.send(channel, message)
            except ChannelFull:
                logger.warning("live: dropped a %s message for %s: its queue is full", message.get("type"), channel)
            await asyncio.sleep(0)  # let this recipient's consumer run before queueing the next


def configured_layer(alias: str = DEFAULT_CHANNEL_LAYER) -> BaseChannelLayer:
    """The channel layer ``CHANNEL_LAYERS`` names (the settings always name one: nothing reaches a
    websocket without it)."""
    layer = get_channel_layer(alias)
    if layer is None:
        raise ImproperlyConfigured(f"CHANNEL_LAYERS has no {alias!r} layer: the live Board needs one")
    return layer

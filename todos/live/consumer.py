"""``/ws/board/``: one websocket per Board tab, telling the page what changed.

Messages to the browser are small: ``changed`` (ids, queues, ops, teams), ``resync``, ``status``,
``subscribed`` and ``error``. The page turns them into ordinary htmx fragment requests, so every
byte it renders went through the same view, permission check and escaping as a page load; the
socket never carries rendered HTML or a todo's fields (see the measurement in
``bench/live_latency.py``, which prints both sizes and the cost of rendering per recipient).

Who receives what:

- the session decides who the human is (anonymous: accepted, then closed with 4401 so the browser
  can tell "signed out" from a network failure and stop retrying);
- the human's team memberships decide the groups joined (``todos.live.groups``), re-read on every
  ``membership`` notification for one of its teams or naming the human, and every
  ``BOARD_LIVE_RECHECK_SECONDS`` as a backstop; leaving a team means leaving its group and
  dropping anything of that team still queued, then a resync so the page forgets what it may no
  longer see;
- the page's subscription (``todos.live.subscriptions``) only skips what the page cannot show.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
from uuid import UUID

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from todos.core.words import ChangeOp
from todos.live.fanout import get_fanout
from todos.live.groups import EVERYONE, team_group, user_group
from todos.live.layer import configured_layer
from todos.live.membership import ateam_ids
from todos.live.outbox import Outbox
from todos.live.subscriptions import InvalidSubscription, Subscription

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
# How long the first websocket of a process waits for the listener before accepting anyway.
LISTENER_WAIT = 3.0
MAX_CLIENT_MESSAGE = 4096
MAX_BACKLOG = 20


class BoardConsumer(AsyncJsonWebsocketConsumer):
    user_id: int | None = None
    teams: frozenset[UUID] = frozenset()
    _team_keys: frozenset[str] = frozenset()
    outbox: Outbox | None = None
    subscription: Subscription = Subscription()
    _recheck_task: asyncio.Task | None = None
    _closing = False

    # --- lifecycle -----------------------------------------------------------------------------

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self._refuse()
            return
        fanout = get_fanout()
        await fanout.listener.wait_connected(LISTENER_WAIT)
        teams = await ateam_ids(user.pk)
        if teams is None:
            await self._refuse()
            return
        self.user_id = user.pk
        self._lock = asyncio.Lock()
        await self._join(user.pk, teams)
        await self.accept()
        self.outbox = Outbox(self._send_message, interval=settings.BOARD_LIVE_COALESCE_SECONDS)
        self.outbox.control({"type": "status", "state": _public_state(fanout.listener.state)})
        self._recheck_task = asyncio.get_running_loop().create_task(self._recheck_forever())

    async def disconnect(self, code):
        if self._recheck_task is not None:
            self._recheck_task.cancel()
        if self.outbox is not None:
            await self.outbox.close()
        if self.user_id is not None:
            for group in [EVERYONE, user_group(self.user_id), *(team_group(t) for t in self.teams)]:
                await self.channel_layer.group_discard(group, self.channel_name)

    async def __call__(self, scope, receive, send):
        """Channels' ``AsyncConsumer.__call__`` with a leaner loop. The stock one
        (``await_many_dispatch``) makes a new task and an ``asyncio.wait`` for every message, so a
        message from the layer reaches its handler three loop turns after it was queued; with 100
        tabs each turn is 100 callbacks, and the first tab's frame left ~20 ms after the fan-out.
        Here one long-lived task per source hands each message straight to ``dispatch``; a lock
        keeps dispatch one message at a time, as channels does."""
        self.scope = scope
        self.channel_layer = configured_layer(self.channel_layer_alias)
        self.channel_name = await self.channel_layer.new_channel()
        channel_receive = functools.partial(self.channel_layer.receive, self.channel_name)
        self.base_send = send
        one_at_a_time = asyncio.Lock()

        async def pump(source):
            while True:
                message = await source()
                async with one_at_a_time:
                    await self.dispatch(message)

        loop = asyncio.get_running_loop()
        pumps = {loop.create_task(pump(receive)), loop.create_task(pump(channel_receive))}
        try:
            done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # StopConsumer: the socket closed; anything else is a bug, raised
        except StopConsumer:
            pass
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    async def dispatch(self, message):
        """Like channels' dispatch, minus its per-message thread hop to close stale ORM
        connections: this consumer reads through the store's async pool and never opens one, and
        that hop serialises every message of every socket through one thread."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def _send_message(self, message: dict | str) -> None:
        """The outbox's sender: a message, or one the fan-out already encoded."""
        if isinstance(message, str):
            await self.send(text_data=message)
        else:
            await self.send_json(message)

    async def _refuse(self):
        await self.accept()
        await self.close(code=CLOSE_UNAUTHENTICATED)

    # --- from the browser ----------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        if self.outbox is None:
            return  # refused: the close is on its way
        if text_data is None or len(text_data) > MAX_CLIENT_MESSAGE:
            await self._error(f"send JSON text messages of at most {MAX_CLIENT_MESSAGE} bytes")
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self._error("not JSON")
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        if not isinstance(content, dict) or "subscribe" not in content:
            await self._error('expected {"subscribe": {"page": …, "filter": …, "todo": …}}')
            return
        try:
            self.subscription = Subscription.parse(content["subscribe"])
        except InvalidSubscription as exc:
            await self._error(str(exc))
            return
        if self.outbox is not None and self.outbox.backlog < MAX_BACKLOG:
            self.outbox.control({"type": "subscribed", "page": self.subscription.page, "todo": self.subscription.todo})

    async def _error(self, text: str):
        # a client that spams and never reads gets no more
        if self.outbox is not None and self.outbox.backlog < MAX_BACKLOG:
            self.outbox.control({"type": "error", "error": text})

    # --- from the fan-out (channel layer) ------------------------------------------------------

    async def board_changed(self, event):
        if ChangeOp.MEMBERSHIP in event["ops"]:
            await self._recheck()
        if self.outbox is None or event["team"] not in self._team_keys:
            return  # no longer a member: whatever was still queued for that team is dropped
        if self.subscription.wants(event):
            ids = self.subscription.shown_ids(event)
            trimmed = len(ids) != len(event["ids"])
            await self.outbox.push(
                ids=ids,
                queues=event["queues"],
                ops=event["ops"],
                teams=[event["team"]],
                # the fan-out's encoding is of every id: a page shown fewer is encoded anew
                text=None if trimmed else event.get("text"),
            )

    async def board_resync(self, event):
        if self.outbox is not None:
            self.outbox.resync()

    async def board_status(self, event):
        if self.outbox is not None:
            self.outbox.control({"type": "status", "state": _public_state(event["state"])})

    # --- membership ----------------------------------------------------------------------------

    async def _join(self, user_id: int, teams: frozenset[UUID]) -> None:
        """Join the groups, or refresh them: the in-memory layer silently forgets a group member
        after a day (``group_expiry``), and Board tabs stay open for longer than that."""
        for group in (EVERYONE, user_group(user_id), *(team_group(team) for team in teams)):
            await self.channel_layer.group_add(group, self.channel_name)
        for team in self.teams - teams:
            await self.channel_layer.group_discard(team_group(team), self.channel_name)
        self.teams = teams
        self._team_keys = frozenset(str(team) for team in teams)  # as notifications spell them

    async def _recheck(self) -> None:
        user_id, outbox = self.user_id, self.outbox
        if user_id is None or outbox is None or self._closing:
            return
        async with self._lock:
            try:
                teams = await ateam_ids(user_id)
            except Exception:  # noqa: BLE001 - database down: keep the last known teams, retry later
                logger.warning("live membership re-check failed for user %s", user_id, exc_info=True)
                return
            if teams is None:
                logger.info("live socket of user %s closed: the account is gone or inactive", user_id)
                self._closing = True
                await self._join(user_id, frozenset())
                await self.close(code=CLOSE_UNAUTHENTICATED)
                return
            changed = teams != self.teams
            lost = bool(self.teams - teams)
            await self._join(user_id, teams)
            if changed:
                outbox.resync(left_team=lost)

    async def _recheck_forever(self) -> None:
        interval = settings.BOARD_LIVE_RECHECK_SECONDS
        while not self._closing:
            # Jittered, so that tabs opened together (every tab reconnects after a restart) do not
            # all query at the same moment, every time.
            await asyncio.sleep(interval * random.uniform(0.75, 1.25))
            await self._recheck()


def _public_state(listener_state: str) -> str:
    """The page's indicator: live, or reconnecting (the server's listener is catching up)."""
    return "live" if listener_state == "live" else "reconnecting"

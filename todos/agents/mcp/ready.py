"""``notifications/todo_ready``: tell live MCP sessions that work arrived in one of their queues.

The store NOTIFYs ``board_ready`` with ``{"endpoint", "queue"}`` whenever work becomes claimable,
and the process's one LISTEN connection (``todos.live.listener``) hands it to :class:`ReadyNotifier`,
which sends ``notifications/todo_ready`` with ``{"queue": …}`` to each session of that endpoint
whose scope holds the queue. The message is a JSON-RPC notification of Board's own (the MCP SDK
sends custom notifications as they are, and its client delivers them through a
``NotificationBinding``); it rides the session's standalone stream (the client's GET), so it
reaches handshake-era sessions that keep that stream open. A session is registered here by the
process serving its GET, for as long as the GET is open (``runtime.Runtime.streaming``): with
several processes, the one that can reach the client is the one that sends, and since every
process LISTENs on ``board_ready``, work that arrives through any process is announced.

It is a hint, never the ledger: a notification sent while the client's stream is down is lost,
one sent after the work was taken by someone else is stale, and the agent answers every one the
same way, with ``claim_next``. Two rules keep it honest anyway:

* the credential is looked up again (by token digest) before anything is sent, so a session whose
  token was revoked, rotated or expired, or whose scope lost the queue, hears nothing more;
* notifications for one session are coalesced: while one delivery runs, further queues wait in a
  set, so a burst of a thousand creates costs one lookup and one message per queue, not a thousand.

When the LISTEN connection recovers from an outage, notifications sent meanwhile are gone, so every
session is told about every queue in its scope (it will find out by claiming).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from typing import Protocol

from todos.core.db import aexecute
from todos.core.selectors.agent_api import Credential, credential_for
from todos.core.store.fragments import READY_CHANNEL
from todos.live.listener import Listener, get_listener

logger = logging.getLogger("todos.agents.mcp")

METHOD = "notifications/todo_ready"


class Outbound(Protocol):
    """The SDK's ``Connection``: its ``notify`` is best effort and never raises."""

    async def notify(self, method: str, params: dict | None) -> None: ...


@dataclass(eq=False)
class LiveSession:
    session_id: str
    endpoint_id: str
    digest: bytes
    queues: frozenset[str]
    outbound: Outbound
    pending: set[str] = field(default_factory=set)
    task: asyncio.Task | None = None


class ReadyNotifier:
    """The live sessions of one event loop, by endpoint, and the delivery of their notifications."""

    def __init__(self, listener: Listener):
        self.loop = listener.loop
        self.sessions: dict[str, LiveSession] = {}
        self._by_endpoint: dict[str, set[str]] = {}
        listener.subscribe(READY_CHANNEL, self._ready)
        listener.on_reconnect(self._resync)

    # --- sessions ------------------------------------------------------------------------------

    def track(self, session_id: str, credential: Credential, digest: bytes, outbound: Outbound) -> bool:
        """Remember (or refresh) a session; True when it is new, so the caller arranges :meth:`forget`."""
        existing = self.sessions.get(session_id)
        if existing is not None:
            existing.queues = frozenset(credential.scope_queues)
            existing.digest = digest
            existing.outbound = outbound
            return False
        live = LiveSession(
            session_id, str(credential.endpoint_id), digest, frozenset(credential.scope_queues), outbound
        )
        self.sessions[session_id] = live
        self._by_endpoint.setdefault(live.endpoint_id, set()).add(session_id)
        return True

    def forget(self, session_id: str) -> None:
        live = self.sessions.pop(session_id, None)
        if live is None:
            return
        ids = self._by_endpoint.get(live.endpoint_id)
        if ids is not None:
            ids.discard(session_id)
            if not ids:
                del self._by_endpoint[live.endpoint_id]
        if live.task is not None and not live.task.done() and live.task is not _current_task():
            live.task.cancel()

    # --- notifications -------------------------------------------------------------------------

    def _ready(self, payload: dict) -> None:
        queue = payload.get("queue")
        if not isinstance(queue, str):
            return
        for session_id in list(self._by_endpoint.get(str(payload.get("endpoint")), ())):
            live = self.sessions[session_id]
            if queue in live.queues:
                self._enqueue(live, {queue})

    def _resync(self) -> None:
        for live in list(self.sessions.values()):
            self._enqueue(live, set(live.queues))

    def _enqueue(self, live: LiveSession, queues: set[str]) -> None:
        live.pending |= queues
        if live.task is None or live.task.done():
            live.task = self.loop.create_task(self._deliver(live), name=f"board-mcp-ready-{live.session_id[:8]}")

    async def _deliver(self, live: LiveSession) -> None:
        try:
            credential = await aexecute(credential_for(live.digest))
            if credential is None or not credential.usable or str(credential.endpoint_id) != live.endpoint_id:
                self.forget(live.session_id)
                return
            live.queues = frozenset(credential.scope_queues)
            while live.pending:
                queue = live.pending.pop()
                if queue in live.queues:
                    await live.outbound.notify(METHOD, {"queue": queue})
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a hint that failed is a hint not sent
            logger.exception("could not send %s to MCP session %s", METHOD, live.session_id[:8])
            live.pending.clear()


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


_notifiers: weakref.WeakKeyDictionary[Listener, ReadyNotifier] = weakref.WeakKeyDictionary()


def notifier() -> ReadyNotifier:
    """This event loop's notifier, subscribed to its listener (started if need be)."""
    listener = get_listener()
    found = _notifiers.get(listener)
    if found is None:
        found = _notifiers[listener] = ReadyNotifier(listener)
    return found

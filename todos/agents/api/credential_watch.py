"""The process's listener ends cached credentials (``todos/core/credential_cache.py``).

Each event loop's listener (``todos.live.listener``) is watched once, from the first lookup that
would cache a credential, and started then if nothing had started it: a process that serves only
the agent API still hears about revocations. A ``board_credentials`` notification forgets the
endpoints it names (all of them when it names none); the listener becoming live, at its first
start and after every recovery, forgets everything, since notifications sent while it was not
listening are lost; so does starting to watch it. Where no listener runs, or while it reconnects,
the TTL alone bounds what is kept.
"""

from __future__ import annotations

import weakref

from todos.core.credential_cache import CACHE, CREDENTIALS_CHANNEL
from todos.live.listener import Listener, get_listener

_watched: weakref.WeakSet[Listener] = weakref.WeakSet()


def watch() -> None:
    """Make sure this event loop's listener (started if need be) ends cached credentials."""
    listener = get_listener()
    if listener in _watched:
        return
    _watched.add(listener)
    listener.subscribe(CREDENTIALS_CHANNEL, changed)
    listener.on_state(state_changed)
    CACHE.clear()  # cached before this listener was watched: a notification may have gone unheard


def changed(payload: dict) -> None:
    endpoints = payload.get("endpoints")
    if isinstance(endpoints, list):
        CACHE.forget(endpoints)
    else:
        CACHE.clear()  # too many to name


def state_changed(state: str) -> None:
    if state == "live":
        CACHE.clear()

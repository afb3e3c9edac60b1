"""A process's short-lived memory of bearer tokens: token digest → the endpoint's credential.

Why: every agent request authenticates, and looking its token up cost an indexed SELECT each time
(0.9 ms of PostgreSQL CPU per request in a profile). A process keeps what it read instead, for at
most ``BOARD_TOKEN_CACHE_SECONDS``. Per-process state is acceptable here only because it is a copy
of rows PostgreSQL holds, kept for a bounded time; the database stays the authority:

- an entry is trusted for the TTL from just before its read, never longer, so a change a process
  was never told about (its listener down, a notification lost) is seen within the TTL of its
  commit;
- every statement of the store that changes what a credential carries (revoke, expiry, rotate,
  scopes, lease, capabilities, delete) forgets the endpoint here at once, in the process that ran
  it, and sends ``board_credentials``, on which every listening process forgets it too
  (``todos/agents/api/credential_watch.py``) as soon as the change commits;
- a token nobody holds is not remembered, so a freshly vended token works at once; a token's own
  expiry is checked on every request, against the time it had left when it was read;
- a lookup that read the row before a change and ends after the change was forgotten must not put
  the old credential back: it notes :attr:`CredentialCache.generation` before it reads, and its
  entry is stored only if nothing was forgotten since (every forget and clear advances it);
- at most ``MAX_ENTRIES`` entries; the least recently used goes first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from django.conf import settings

from todos.core.selectors.agent_api import Credential

# Sent by the store's statements that change a credential: {"endpoints": [ids]}, or
# {"endpoints": null} for more than fit one notification (every process then forgets everything).
CREDENTIALS_CHANNEL: LiteralString = "board_credentials"
MAX_ENTRIES = 10_000
# A process stamps an endpoint's last_seen_at at most this often (the statement checks it too).
STAMP_EVERY_SECONDS = 60.0


def ttl() -> float:
    """Seconds an entry is trusted (0: nothing is remembered)."""
    return float(settings.BOARD_TOKEN_CACHE_SECONDS)


@dataclass(eq=False)
class Entry:
    """A credential as read, with its deadlines on the process's monotonic clock."""

    credential: Credential
    trusted_until: float
    expires_at: float | None  # when the token itself expires (None: never)
    stamp_due: float  # when last_seen_at may be stamped again

    def expired(self, now: float) -> bool:
        return self.credential.expired or (self.expires_at is not None and now >= self.expires_at)


class CredentialCache:
    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()
        # Lookups run in event loops, forgets also in the Board's threads and commands.
        self._lock = threading.Lock()
        self._generation = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def generation(self) -> int:
        """Read before a lookup reads the database; hand it to :meth:`remember`."""
        return self._generation

    def get(self, digest: bytes, now: float) -> Entry | None:
        """The entry for ``digest`` while it is trusted, else None (a stale one is dropped)."""
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            if now >= entry.trusted_until:
                del self._entries[digest]
                return None
            self._entries.move_to_end(digest)
            return entry

    def remember(self, digest: bytes, credential: Credential, *, generation: int, read_at: float) -> Entry:
        """The entry of ``credential``, read from the database after ``read_at`` (monotonic) and
        after ``generation`` was noted. Stored only while caching is on and nothing was forgotten
        since ``generation``; returned either way, for this request's own checks."""
        seconds = ttl()
        expires_in = credential.expires_in
        entry = Entry(
            credential=credential,
            trusted_until=read_at + seconds,
            expires_at=None if expires_in is None else read_at + expires_in,
            stamp_due=read_at + max(credential.stamp_in, 0.0),
        )
        if seconds <= 0:
            return entry
        with self._lock:
            if generation != self._generation:
                return entry  # a forget ran while this lookup read: what it read may be the old row
            self._entries[digest] = entry
            self._entries.move_to_end(digest)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return entry

    def forget(self, endpoint_ids: Iterable[object]) -> int:
        """Drop the entries of these endpoints (ids as UUIDs or strings; a malformed one is
        skipped) and stop lookups in flight from storing theirs. Returns how many were dropped."""
        wanted = set()
        for value in endpoint_ids:
            try:
                wanted.add(value if isinstance(value, UUID) else UUID(str(value)))
            except ValueError:
                continue
        with self._lock:
            self._generation += 1
            gone = [digest for digest, entry in self._entries.items() if entry.credential.endpoint_id in wanted]
            for digest in gone:
                del self._entries[digest]
        return len(gone)

    def clear(self) -> None:
        """Forget everything (notifications may have been missed)."""
        with self._lock:
            self._generation += 1
            self._entries.clear()

    def claim_stamp(self, entry: Entry, now: float) -> bool:
        """Whether this request stamps ``last_seen_at``: due, and then not again for a minute (so
        concurrent requests of one endpoint do not all stamp)."""
        with self._lock:
            if now < entry.stamp_due:
                return False
            entry.stamp_due = now + STAMP_EVERY_SECONDS
            return True


CACHE = CredentialCache()

"""What every claim and report of an endpoint says about the endpoint itself: that it was seen
(``last_seen_at``), and, for claims, whether its claims are paused.

Why in the statements: only HTTP requests stamped ``last_seen_at`` (through the credential cache),
so an endpoint working over MCP or in-process (``manage.py work``, the demo's agents) showed
"never". The stamp rides in the statement that does the work: at most once a minute, and never
waiting for a lock (docs/lifecycle.md, "Last seen").

Only a statement built when this process has not stamped the endpoint for a minute carries the
stamp (:data:`STAMPS`): the two data-modifying CTEs cost a claim or a report about a fifth more
CPU on the drain (bench/README.md, "last seen"), so the other statements of that minute leave
them out. The statement's own guard still writes at most once a minute across processes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import LiteralString
from uuid import UUID

from todos.core.store.fragments import log_endpoints
from todos.core.words import ChangeOp

# The endpoint's row, locked without waiting, when its stamp is due. ``FOR NO KEY UPDATE`` does
# not conflict with the KEY SHARE locks a todo's insert or the relay's counts hold on it (their
# foreign keys); ``SKIP LOCKED`` means a row another transaction holds (a concurrent claim's own
# stamp, a person's change to the endpoint) is left alone: that minute's stamp is theirs, or the
# next call's. So a claim or a report never waits here, and concurrent calls stamp once.
SEEN_DUE: LiteralString = """(SELECT s.id FROM endpoints s
                  WHERE s.id = %(endpoint_id)s
                    AND (s.last_seen_at IS NULL OR s.last_seen_at < now() - interval '1 minute')
                  FOR NO KEY UPDATE SKIP LOCKED)"""


def seen_ctes() -> LiteralString:
    """Two CTEs (``seen``, ``seen_logged``) that stamp ``%(endpoint_id)s``'s ``last_seen_at``
    when it is over a minute old, and log the ``seen`` change (so pages showing "last seen"
    refresh). They touch no todo and no attempt row."""
    return f"""seen AS (
    -- last seen: at most once a minute, never waiting for the endpoint's row (SEEN_DUE)
    UPDATE endpoints e SET last_seen_at = now()
    WHERE e.id = {SEEN_DUE}
    RETURNING e.id, e.team_id
),
seen_logged AS ({log_endpoints(ChangeOp.SEEN, "seen")})"""


# A claim's guard: the endpoint's claims are not paused (an uncorrelated sub-select, so
# PostgreSQL reads the endpoint once per statement and skips the scans when it is paused).
CLAIMS_OPEN: LiteralString = """NOT EXISTS (
        SELECT 1 FROM endpoints pe WHERE pe.id = %(endpoint_id)s AND pe.claims_paused_at IS NOT NULL)"""


def paused_by(found: LiteralString = "r.id") -> LiteralString:
    """SQL: who paused the endpoint's claims and when (JSON ``{by, at}``), read only when a claim
    took nothing (``found`` is NULL); NULL unless they are paused. ``endpoint_claims_paused``
    (0037) reads with the claim's snapshot, the one CLAIMS_OPEN saw, so the two agree; as a call,
    it is no part of a claim that took a todo."""
    return f"CASE WHEN {found} IS NULL THEN endpoint_claims_paused(%(endpoint_id)s) END"


# A process stamps one endpoint at most this often (the statement checks the minute itself too).
STAMP_EVERY_SECONDS = 60.0
REMEMBERED_MAX = 10_000


class StampClock:
    """When this process last built a stamping statement for each endpoint (monotonic clock)."""

    def __init__(self) -> None:
        self._next: dict[UUID, float] = {}
        self._lock = threading.Lock()  # statements are built in event loops and threads alike
        self._fixed: bool | None = None

    def due(self, endpoint_id: UUID) -> bool:
        """Whether the statement being built for ``endpoint_id`` carries the stamp; a yes holds
        off the next for a minute (a stamp lost to a rolled-back or skipped statement is a
        minute late, never wrong)."""
        if self._fixed is not None:
            return self._fixed
        now = time.monotonic()
        with self._lock:
            if self._next.get(endpoint_id, 0.0) > now:
                return False
            if len(self._next) >= REMEMBERED_MAX:
                self._next.clear()
            self._next[endpoint_id] = now + STAMP_EVERY_SECONDS
            return True

    def forget(self) -> None:
        """Every endpoint is due again (tests that move the database's clock)."""
        with self._lock:
            self._next.clear()

    @contextmanager
    def fixed(self, value: bool) -> Iterator[None]:
        """Statements built meanwhile stamp (or not) regardless of the clock: the SQL catalog
        renders both texts."""
        before, self._fixed = self._fixed, value
        try:
            yield
        finally:
            self._fixed = before


STAMPS = StampClock()


def seen_sql(endpoint_id: UUID) -> LiteralString:
    """The stamp's CTEs and a comma, when a stamp is due for ``endpoint_id``; else nothing."""
    return f"{seen_ctes()},\n" if STAMPS.due(endpoint_id) else ""

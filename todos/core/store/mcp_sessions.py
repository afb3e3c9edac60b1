"""MCP sessions in PostgreSQL: what lets any Board process serve a session another one opened.

A stateful MCP session is born in one process (the SDK's transport and message loop live in its
memory), but behind a round-robin balancer its next request may land on any process. So the
outcome of the handshake is written down here, in ``mcp_sessions``, before the ``initialize``
answer leaves the server: the session id, the endpoint and token digest that opened it, the
negotiated protocol version and the client's ``initialize`` params. A process that meets a
session id it does not hold reads the row (:func:`lookup`) and re-creates the session
(``runtime.py``); a process that holds a session whose row is gone (the client's DELETE reached
another process, or the sweep expired it) drops its copy and answers 404, as the streamable-HTTP
spec prescribes, and the client initializes again.

``last_seen_at`` is stamped by :func:`lookup` at most once a minute (most requests write
nothing), and by :func:`keep_alive` for the sessions whose notification stream (the client's GET)
a process holds open, which is activity too. :func:`sweep` deletes the sessions no process has
seen for the idle timeout, so the table stays bounded, and :func:`present` tells a process which
of the sessions it holds have ended elsewhere, so its memory stays bounded too. These statements touch nothing but
``mcp_sessions``; the queue never depends on a session.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from uuid import UUID

from todos.core.db import Statement

# The SDK's session ids are uuid4().hex. Anything else is answered "not found" without a query
# (a NUL byte or a megabyte of header must not reach PostgreSQL).
SESSION_ID = re.compile(r"^[0-9a-f]{32}$")
# A request refreshes last_seen_at only when it is older than this: one write a minute per session.
TOUCH_AFTER_SECONDS = 60
SWEEP_BATCH = 1000


def well_formed(session_id: str | None) -> bool:
    return session_id is not None and SESSION_ID.match(session_id) is not None


@dataclass(frozen=True)
class SessionRecord:
    """A session as the database knows it."""

    session_id: str
    owned: bool  # opened by the endpoint and token of the request that looked it up
    expired: bool  # not seen by any process for the idle timeout (the sweep has not run yet)
    protocol_version: str
    client_params: dict


def record(
    session_id: str, endpoint_id: UUID, digest: bytes, protocol_version: str, client_params: dict
) -> Statement[None]:
    """Write down a session at ``initialize`` (before its answer is sent). A client may repeat
    ``initialize`` on its session (the SDK answers it): the record then follows the new handshake,
    for the owner only (:func:`lookup` has refused anyone else before the request got here)."""
    return Statement(
        """
        INSERT INTO mcp_sessions (id, endpoint_id, token_digest, protocol_version, client_params)
        VALUES (%(id)s, %(endpoint)s, %(digest)s, %(version)s, %(params)s::jsonb)
        ON CONFLICT (id) DO UPDATE
            SET protocol_version = EXCLUDED.protocol_version, client_params = EXCLUDED.client_params,
                last_seen_at = now()
            WHERE mcp_sessions.endpoint_id = EXCLUDED.endpoint_id AND mcp_sessions.token_digest = EXCLUDED.token_digest
        RETURNING id
        """,
        {
            "id": session_id,
            "endpoint": endpoint_id,
            "digest": digest,
            "version": protocol_version,
            "params": json.dumps(client_params),
        },
        lambda rows: None,
    )


def lookup(session_id: str, endpoint_id: UUID, digest: bytes, idle_seconds: float) -> Statement[SessionRecord | None]:
    """The session ``session_id``, or None; stamps ``last_seen_at`` when the caller owns it and
    the stamp is over a minute old (a foreign caller's lookup changes nothing)."""
    return Statement(
        """
        WITH found AS (
            SELECT id,
                   endpoint_id = %(endpoint)s AND token_digest = %(digest)s AS owned,
                   last_seen_at < now() - make_interval(secs => %(idle)s) AS expired,
                   last_seen_at < now() - make_interval(secs => %(touch)s) AS stale,
                   protocol_version, client_params
            FROM mcp_sessions
            WHERE id = %(id)s
        ), touched AS (
            UPDATE mcp_sessions s SET last_seen_at = now()
            FROM found
            WHERE s.id = found.id AND found.owned AND found.stale AND NOT found.expired
        )
        SELECT id, owned, expired, protocol_version, client_params FROM found
        """,
        {
            "id": session_id,
            "endpoint": endpoint_id,
            "digest": digest,
            "idle": idle_seconds,
            "touch": TOUCH_AFTER_SECONDS,
        },
        _record,
    )


def _record(rows: list[dict]) -> SessionRecord | None:
    if not rows:
        return None
    row = rows[0]
    return SessionRecord(
        session_id=row["id"],
        owned=row["owned"],
        expired=row["expired"],
        protocol_version=row["protocol_version"],
        client_params=row["client_params"],
    )


def end(session_id: str, endpoint_id: UUID, digest: bytes) -> Statement[bool]:
    """The client ended its session (DELETE): True if it was there."""
    return Statement(
        """
        DELETE FROM mcp_sessions
        WHERE id = %(id)s AND endpoint_id = %(endpoint)s AND token_digest = %(digest)s
        RETURNING id
        """,
        {"id": session_id, "endpoint": endpoint_id, "digest": digest},
        lambda rows: bool(rows),
    )


def keep_alive(session_ids: list[str]) -> Statement[set[str]]:
    """Stamp the sessions a process holds a notification stream for; the ids still in the
    database (the others ended elsewhere, and their streams should close)."""
    return Statement(
        "UPDATE mcp_sessions SET last_seen_at = now() WHERE id = ANY(%(ids)s) RETURNING id",
        {"ids": list(session_ids)},
        lambda rows: {row["id"] for row in rows},
    )


def present(session_ids: list[str], idle_seconds: float) -> Statement[set[str]]:
    """Which of ``session_ids`` are still live (recorded, and not idle past ``idle_seconds``)."""
    return Statement(
        """
        SELECT id FROM mcp_sessions
        WHERE id = ANY(%(ids)s) AND last_seen_at >= now() - make_interval(secs => %(idle)s)
        """,
        {"ids": list(session_ids), "idle": idle_seconds},
        lambda rows: {row["id"] for row in rows},
    )


def sweep(idle_seconds: float) -> Statement[int]:
    """Delete (a batch of) the sessions no process has seen for ``idle_seconds``; how many."""
    return Statement(
        """
        DELETE FROM mcp_sessions
        WHERE id IN (
            SELECT id FROM mcp_sessions
            WHERE last_seen_at < now() - make_interval(secs => %(idle)s)
            ORDER BY last_seen_at
            LIMIT %(batch)s
            FOR UPDATE SKIP LOCKED
        )
        RETURNING id
        """,
        {"idle": idle_seconds, "batch": SWEEP_BATCH},
        lambda rows: len(rows),
    )

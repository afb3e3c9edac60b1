"""The database cannot answer right now: what counts as that, in one place for every surface.

A PostgreSQL restart, a network cut, a pool with no connection free in time, a statement stopped
by ``statement_timeout``: none of these is the caller's fault or a bug in Board, and all of them
pass. Every surface therefore answers them the same way, "unavailable, retry in a moment", instead
of ``500 internal``: the agent API with ``503`` and ``Retry-After`` (``todos.agents.api``), MCP with a
JSON-RPC error or a tool error ``unavailable: …`` (``todos.agents.mcp``), the Board with a 503 page that
reloads itself (``board.middleware``), ``/healthz`` with 503.

:func:`classify` is the one decision. The store's executor (``todos.core.db``) applies it to every
statement, so the store, the selectors and every caller of theirs see an :class:`Unavailable`
(a :class:`~todos.core.errors.StoreError` with the code ``unavailable``); the Board's middleware
applies it to what Django's ORM raises (sessions, auth). What the driver said stays in the
exception's ``__cause__``, for the log: clients get only the message.

:func:`unreachable` is the narrower question the circuit (``todos.core.circuit``) asks of a failed
connection attempt: does it say nothing can connect now? Only then does every request of the
process get its 503 at once, without asking for a connection.

A statement timeout counts as unavailable, not as a client error or an internal one: the request
was valid and Board is not broken; the database did not answer in time (it is overloaded, or a
lock is held), which is what 503 says, and retrying later is the right move.
"""

from __future__ import annotations

import re

import psycopg
from django.db import utils as django_db
from psycopg_pool import PoolTimeout, TooManyRequests

from todos.core.errors import StoreError

RETRY_AFTER_SECONDS = 2

UNREACHABLE = "the database is unreachable; retry"
BUSY = "the database is unreachable or every connection is busy; retry"
TIMED_OUT = "the database did not answer in time (statement timeout); retry"

# SQLSTATE classes that mean "not now" rather than "never": connection exception (08),
# insufficient resources (53: too many connections, out of memory), operator intervention (57:
# query canceled, admin shutdown, cannot connect now). Others (a deadlock, a constraint, a
# syntax error) are not an outage and stay what they are.
TRANSIENT_SQLSTATE_CLASSES = frozenset({"08", "53", "57"})


class Unavailable(StoreError):
    """The database cannot answer now; the same call may well succeed in ``retry_after`` seconds."""

    code = "unavailable"

    def __init__(self, message: str = UNREACHABLE, retry_after: int = RETRY_AFTER_SECONDS):
        super().__init__(message)
        self.retry_after = retry_after


def classify(exc: BaseException) -> Unavailable | None:
    """The :class:`Unavailable` that ``exc`` amounts to, or None when it is something else."""
    if isinstance(exc, Unavailable):
        return exc
    if isinstance(exc, (django_db.OperationalError, django_db.InterfaceError)):
        # Django wraps the driver's error and keeps it as the cause; one it raises itself
        # ("connection already closed") has none.
        cause = exc.__cause__
        return classify(cause) if isinstance(cause, psycopg.Error) else Unavailable(UNREACHABLE)
    if isinstance(exc, (PoolTimeout, TooManyRequests)):
        return Unavailable(BUSY)
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return Unavailable(TIMED_OUT)
    if isinstance(exc, psycopg.InterfaceError):
        return Unavailable(UNREACHABLE)
    if isinstance(exc, psycopg.OperationalError):
        # No SQLSTATE: libpq's own failure (refused, reset, "server closed the connection").
        if exc.sqlstate is None or exc.sqlstate[:2] in TRANSIENT_SQLSTATE_CLASSES:
            return Unavailable(UNREACHABLE)
    return None


# How libpq reports what the server itself answered to a connection attempt: the severity word (in
# the server's language), a colon and two spaces ("… failed: FATAL:  too many clients").
SERVER_ANSWERED = re.compile(r"failed: [^\s:]+:  ")
# What a server says when it cannot take connections at all right now (SQLSTATE 57P03, and the
# pooler's word for a server it cannot reach).
CANNOT_CONNECT_NOW = re.compile(
    r"the database system is (starting up|shutting down|in recovery mode|not (yet )?accepting connections)"
    r"|pgbouncer cannot connect to server|server login has been failing"
)


def unreachable(exc: BaseException) -> bool:
    """Whether a failed connection attempt says nothing can connect now (what opens the circuit,
    :mod:`todos.core.circuit`): refused, no socket, timed out, no route, the server starting up
    or shutting down. A server that answered with a refusal of its own (too many clients, a bad
    password, no such database) is reachable, and its existing connections still work.

    libpq gives a failed connection attempt no SQLSTATE, so the message is what tells.
    """
    if not isinstance(exc, psycopg.OperationalError) or exc.sqlstate is not None:
        return False
    message = str(exc)
    return not SERVER_ANSWERED.search(message) or bool(CANNOT_CONNECT_NOW.search(message))


def describe(exc: BaseException) -> str:
    """What the driver said, for the log line (never for the client)."""
    cause = exc.__cause__ if isinstance(exc, Unavailable) and exc.__cause__ is not None else exc
    text = " ".join(str(cause).split())
    return f"{type(cause).__name__}: {text[:300]}"

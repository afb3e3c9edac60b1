"""The store: every write to todos, attempts, endpoints, teams, bulk jobs and MCP sessions, one SQL
statement each.

Layout:

* ``agent.py`` – an endpoint's transitions (create, claims, heartbeat, complete, fail, release,
  batches), scoped by ``endpoint_id`` and fenced;
* ``human.py`` – a human's transitions on the Board, scoped by ``operatorOwns``, audited;
* ``background.py`` – the reaper, the due-retry requeue and retention;
* ``endpoints.py`` and ``teams.py`` – credentials, scopes and memberships;
* ``schedules.py`` – periodic schedules: audited writes, and the loop's firing (two statements in
  one transaction, under the schedules' row locks);
* ``preferences.py`` – a person's own Board settings (the zone times are shown in);
* ``bulk_jobs.py`` – bulk jobs and their chunks; ``mcp_sessions.py`` – MCP sessions' records;
* ``claims.py`` – the claim statement all claimers share; ``fragments.py`` – SQL pieces
  (scopes, the fence, the change-log rows, the agents' wake-up NOTIFY); ``inputs.py`` – cleaning
  and validation; ``records.py`` – results.

Every statement that changes todos, endpoints, pauses, memberships or schedules writes its change-log rows in
the same statement; the relay (``todos/live/relay.py``) turns them into Board notifications and
exact counts.

Functions build :class:`todos.core.db.Statement` objects; ``todos.core.db.execute`` / ``aexecute`` run them.
Each one is rendered, as PostgreSQL receives it, in ``todos/sql/statements/`` (``manage.py
render_sql``); a new function that returns a Statement needs an entry in ``todos/ops/sql_catalog.py``.
"""

from todos.core.errors import Conflict, Forbidden, Internal, Invalid, NotFound, StaleSnapshot, StoreError
from todos.core.store.scopes import AgentScope, OperatorScope

__all__ = [
    "AgentScope",
    "Conflict",
    "Forbidden",
    "Internal",
    "Invalid",
    "NotFound",
    "OperatorScope",
    "StaleSnapshot",
    "StoreError",
]

"""psycopg converts a statement's placeholders once and caches it, if the text is short enough:
the store raises that bound (``todos.core.db.QUERY_CACHE_MAX_BYTES``) so its long statements (the
claim is 5.5 KB) are not converted again on every call. This fails first if psycopg moves the
constant, or if a statement outgrows the bound."""

from __future__ import annotations

import uuid

import psycopg._queries

from todos.core import db
from todos.core.store import agent
from todos.core.store.scopes import AgentScope

SCOPE = AgentScope(endpoint_id=uuid.UUID(int=1), team_id=uuid.UUID(int=2), queues=("q",))


def test_the_store_raises_psycopgs_cache_bound():
    assert psycopg._queries.MAX_CACHED_STATEMENT_LENGTH >= db.QUERY_CACHE_MAX_BYTES


def test_the_hot_statements_fit_the_cache():
    statements = [
        agent.claim_next(SCOPE),
        agent.claim_batch(SCOPE, max=100),
        agent.complete(SCOPE, "td_" + "0" * 32),
        agent.heartbeat(SCOPE, "td_" + "0" * 32),
        agent.complete_batch(SCOPE, [{"id": "td_" + "0" * 32}]),
        agent.create_batch(SCOPE, [{"queue": "q", "title": "t"}]),
    ]
    sizes = {len(s.sql.encode()) for s in statements}
    assert max(sizes) > 4096  # the claim: longer than psycopg's own bound
    assert max(sizes) <= psycopg._queries.MAX_CACHED_STATEMENT_LENGTH
    assert all(len(s.params) <= psycopg._queries.MAX_CACHED_STATEMENT_PARAMS for s in statements)

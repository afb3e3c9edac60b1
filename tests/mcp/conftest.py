"""Fixtures for the MCP transport: the live daphne server and a team with endpoints.

Every over-the-wire test talks to a real Board (``tests.support.live_server``) through the SDK's own
client (``tests/mcp/client.py``), so what is tested is what an agent's MCP host sees: the HTTP
status codes, the session header, the SSE streams, the JSON-RPC framing, and the client's own
check of each result against the tool's ``outputSchema``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests import factories


@dataclass
class Tenancy:
    team: object
    worker: object  # every verb, queues default + other
    agent: object  # the worker's AgentScope, for store calls in setup

    @property
    def token(self) -> str:
        return self.worker.token


@pytest.fixture
def tenancy(store_db) -> Tenancy:
    team = factories.team()
    worker = factories.endpoint(team, slug="worker", queues=("default", "other"))
    return Tenancy(team=team, worker=worker, agent=factories.agent(worker))


@pytest.fixture
def url(asgi_server, store_db) -> str:
    return asgi_server.url

"""The API suite's tenancy: a team with a worker endpoint scoped to two queues."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests import factories


@dataclass
class Tenancy:
    team: object
    worker: object  # every verb, queues default + other
    worker_token: str
    agent: object  # the worker's AgentScope, for store calls

    def scope(self, vended):
        return factories.agent(vended)


@pytest.fixture
def tenancy(store_db) -> Tenancy:
    team = factories.team()
    worker = factories.endpoint(team, slug="worker", queues=("default", "other"))
    return Tenancy(team=team, worker=worker, worker_token=worker.token, agent=factories.agent(worker))

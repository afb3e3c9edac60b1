"""The live suite's tenancy: two teams, each with an agent and a signed-in operator."""

from __future__ import annotations

import pytest

from tests import factories
from tests.support.live import session_cookie


@pytest.fixture
def tenancy(store_db):
    """Two teams, each with an agent endpoint and a signed-in human (operator role)."""

    class T:
        pass

    t = T()
    t.team_a, t.team_b = factories.team(), factories.team()
    t.agent_a, t.agent_b = factories.agent(factories.endpoint(t.team_a)), factories.agent(factories.endpoint(t.team_b))
    t.user_a, t.user_b = factories.user(), factories.user()
    t.human_a, t.human_b = factories.member(t.team_a, t.user_a), factories.member(t.team_b, t.user_b)
    t.cookie_a, t.cookie_b = session_cookie(t.user_a), session_cookie(t.user_b)
    return t

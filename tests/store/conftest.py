"""Fixtures for the store's tests: a real database for every test and a small two-team world."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests import factories
from todos.core.store.scopes import AgentScope, OperatorScope


@pytest.fixture(autouse=True)
def _store(store_db, settings):
    """Every store test runs against the real database (see ``tests/conftest.py``).

    Users are created with a fast hasher: the default one costs a second per user.
    """
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@dataclass
class World:
    """Two teams. Team A has two endpoints (``agent`` in queues default/other/third, ``sibling``
    in default) and three humans (operator, admin, viewer); team B has one endpoint and one operator."""

    team: object
    vended: object
    agent: AgentScope
    sibling: AgentScope
    human: OperatorScope
    admin: OperatorScope
    viewer: OperatorScope
    foreign_team: object
    foreign_agent: AgentScope
    outsider: OperatorScope


@pytest.fixture
def world() -> World:
    team = factories.team("team-a")
    vended = factories.endpoint(team, slug="worker", queues=("default", "other", "third"))
    sibling = factories.endpoint(team, slug="sibling", queues=("default",))
    foreign_team = factories.team("team-b")
    foreign = factories.endpoint(foreign_team, slug="foreign", queues=("default",))
    return World(
        team=team,
        vended=vended,
        agent=factories.agent(vended),
        sibling=factories.agent(sibling),
        human=factories.member(team, factories.user("olive"), "operator"),
        admin=factories.member(team, factories.user("adam"), "admin"),
        viewer=factories.member(team, factories.user("vera"), "viewer"),
        foreign_team=foreign_team,
        foreign_agent=factories.agent(foreign),
        outsider=factories.member(foreign_team, factories.user("otto"), "operator"),
    )


@pytest.fixture
def agent(world) -> AgentScope:
    return world.agent


@pytest.fixture
def human(world) -> OperatorScope:
    return world.human

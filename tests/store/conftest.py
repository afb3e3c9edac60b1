"""Fixtures for the store's tests: a real database for every test and a small two-team world."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests import factories as f
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
    team = f.team("team-a")
    vended = f.endpoint(team, slug="worker", queues=("default", "other", "third"))
    sibling = f.endpoint(team, slug="sibling", queues=("default",))
    foreign_team = f.team("team-b")
    foreign = f.endpoint(foreign_team, slug="foreign", queues=("default",))
    return World(
        team=team,
        vended=vended,
        agent=f.agent(vended),
        sibling=f.agent(sibling),
        human=f.member(team, f.user("olive"), "operator"),
        admin=f.member(team, f.user("adam"), "admin"),
        viewer=f.member(team, f.user("vera"), "viewer"),
        foreign_team=foreign_team,
        foreign_agent=f.agent(foreign),
        outsider=f.member(foreign_team, f.user("otto"), "operator"),
    )


@pytest.fixture
def agent(world) -> AgentScope:
    return world.agent


@pytest.fixture
def human(world) -> OperatorScope:
    return world.human

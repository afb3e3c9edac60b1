"""The Board's world: two teams (acme, globex), their people, an agent, and todos
in every state, built through the store exactly as production writes them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.test import Client

from tests import factories
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

HTMX = {"HTTP_HX_REQUEST": "true"}


def htmx(target: str | None = None, current_url: str | None = None) -> dict:
    headers = dict(HTMX)
    if target:
        headers["HTTP_HX_TARGET"] = target
    if current_url:
        headers["HTTP_HX_CURRENT_URL"] = current_url
    return headers


@pytest.fixture
def world(store_db):
    acme = factories.team("acme", "Acme")
    acme_ep = factories.endpoint(acme, slug="acme-worker", queues=("default", "email"))
    globex = factories.team("globex", "Globex")
    globex_ep = factories.endpoint(globex, slug="globex-worker", queues=("default",))
    alice_user = factories.user("alice")
    bob_user = factories.user("bob")
    vera_user = factories.user("vera")
    adam_user = factories.user("adam")
    return SimpleNamespace(
        acme=acme,
        globex=globex,
        agent=factories.agent(acme_ep),
        globex_agent=factories.agent(globex_ep),
        acme_ep=acme_ep.endpoint,
        globex_ep=globex_ep.endpoint,
        alice_user=alice_user,
        bob_user=bob_user,
        vera_user=vera_user,
        adam_user=adam_user,
        alice=factories.member(acme, alice_user, "operator"),  # operator of acme
        bob=factories.member(globex, bob_user, "operator"),  # operator of globex (the outsider)
        vera=factories.member(acme, vera_user, "viewer"),  # viewer of acme
        adam=factories.member(acme, adam_user, "admin"),  # admin of acme
    )


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(world):
    return login(world.alice_user)


@pytest.fixture
def bob_client(world):
    return login(world.bob_user)


@pytest.fixture
def vera_client(world):
    return login(world.vera_user)


def make(world, state: str, *, title: str | None = None, agent=None, **kwargs):
    """A todo of acme (or of ``agent``'s endpoint) in one of the Board's states."""
    agent = agent or world.agent
    title = title or f"a {state} todo"
    if state == "dead":
        kwargs.setdefault("max_attempts", 1)
    if state == "scheduled":
        kwargs.setdefault("delay_seconds", 3600)
    todo = execute(agent_store.create(agent, queue=kwargs.pop("queue", "default"), title=title, **kwargs)).todo
    if state in ("pending", "scheduled"):
        return todo
    if state == "mine":
        return execute(human_store.claim(world.alice, todo.id)).todo
    claim = execute(agent_store.claim(agent, todo.id, claimant="worker-7", capabilities=list(todo.requires) or None))
    if state == "claimed":
        return claim.todo
    if state in ("retry", "dead"):
        return execute(agent_store.fail(agent, todo.id, summary=f"boom on {todo.id[-6:]}"))
    if state == "done":
        return execute(agent_store.complete(agent, todo.id, result={"ok": True}, summary="all good"))
    if state == "canceled":
        return execute(human_store.cancel(world.alice, todo.id))
    raise ValueError(state)


@pytest.fixture
def no_seen_stamps():
    """Claims and reports built meanwhile leave out the endpoint's once-a-minute "last seen"
    stamp (and its ``seen`` change): for tests that count a transition's own changes exactly.
    The stamp itself is tested in tests/store/test_endpoint_pause.py."""
    from todos.core.store.endpoint_gate import STAMPS

    with STAMPS.fixed(False):
        yield

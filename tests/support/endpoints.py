"""Fixtures for the Endpoints screen: the Board's two-team world (acme: alice operator, vera
viewer, adam admin; globex: bob operator) plus globex's admin gina, and helpers to vend through
the Board and read the one-time token off the reveal page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests import factories
from tests.support.board import login
from todos.core import db

TOKEN_RE = re.compile(r'id="token-value"[^>]*>(bd_[A-Za-z0-9_-]{43,})<')


@pytest.fixture
def gina(world):
    """An admin of the *other* team (globex)."""
    user = factories.user("gina")
    factories.member(world.globex, user, "admin")
    return user


@pytest.fixture
def adam_client(world):
    return login(world.adam_user)


def vend_data(**overrides) -> dict:
    data = {
        "team": "acme",
        "name": "CI fixer",
        "slug": "",
        "scope_verbs": ["claim_next", "complete", "create_for"],
        "scope_queues": ["default"],
        "scope_queues_extra": "",
        "default_lease_ttl_seconds": "",
        "lifetime": "never",
        "expires_at": "",
    }
    data.update(overrides)
    return data


def vend(client, **overrides):
    return client.post(reverse("endpoint_vend"), vend_data(**overrides))


def token_of(response) -> str:
    match = TOKEN_RE.search(response.content.decode())
    assert match, "no token on the page"
    return match.group(1)


def sql(query: str, params=None) -> list[dict]:
    with db.connect() as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def endpoint(slug: str) -> dict | None:
    rows = sql("SELECT * FROM endpoints WHERE slug = %s", (slug,))
    return rows[0] if rows else None


def written() -> dict:
    """What an action could write: endpoints, todos, attempts, audit rows."""
    return sql(
        """SELECT (SELECT count(*) FROM endpoints) AS endpoints, (SELECT count(*) FROM audit_log) AS audit,
                  (SELECT coalesce(string_agg(id::text || state || credential_prefix || scope_verbs::text
                                              || scope_queues::text || coalesce(default_lease_ttl_seconds, 0),
                                              ',' ORDER BY id), '') FROM endpoints) AS endpoint_rows,
                  (SELECT coalesce(string_agg(id || state, ',' ORDER BY id), '') FROM todos) AS todos,
                  (SELECT count(*) FROM todo_attempts WHERE ended_at IS NULL) AS open_attempts"""
    )[0]

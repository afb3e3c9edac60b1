"""Builders for the tenancy every test needs: users, teams, endpoints, agent scopes."""

from __future__ import annotations

import itertools
from uuid import UUID

from django.contrib.auth import get_user_model

from todos.core.db import execute
from todos.core.store import endpoints as endpoint_store
from todos.core.store import teams as team_store
from todos.core.store.endpoints import SCOPE_VERBS
from todos.core.store.scopes import AgentScope, OperatorScope

_n = itertools.count(1)


def user(username: str | None = None, *, password: str = "pw-for-tests-1", superuser: bool = False):
    username = username or f"user{next(_n)}"
    User = get_user_model()
    if superuser:
        return User.objects.create_superuser(username=username, password=password, email="")
    return User.objects.create_user(username=username, password=password)


def team(slug: str | None = None, name: str | None = None):
    slug = slug or f"team-{next(_n)}"
    return execute(team_store.create_team(slug=slug, name=name or slug.title()))


def member(team_record, user_obj, role: str = "operator"):
    execute(team_store.set_member(None, team_id=team_record.id, user_id=user_obj.id, role=role))
    return OperatorScope(user_id=user_obj.id, username=user_obj.username)


def endpoint(
    team_record,
    *,
    slug: str | None = None,
    queues=("default",),
    verbs=SCOPE_VERBS,
    lease=None,
    expires_at=None,
    capabilities=None,
):
    slug = slug or f"ep-{next(_n)}"
    return execute(
        endpoint_store.vend(
            None,
            team_id=team_record.id,
            name=slug,
            slug=slug,
            verbs=list(verbs),
            queues=list(queues),
            default_lease_ttl_seconds=lease,
            expires_at=expires_at,
            capabilities=capabilities,
        )
    )


def agent(vended, *, session: str | None = None) -> AgentScope:
    ep = vended.endpoint
    return AgentScope(
        endpoint_id=UUID(str(ep.id)),
        team_id=ep.team_id,
        queues=ep.scope_queues,
        default_lease_ttl_seconds=ep.default_lease_ttl_seconds,
        session=session,
        verbs=frozenset(ep.scope_verbs),
        capabilities=ep.capabilities,
    )


def recount() -> None:
    """Rebuild the relay's counts from ``todos`` (``manage.py recount``), for a test that wrote
    todos behind the store's back as a fixture shortcut: nothing logged those rows."""
    from todos.core.db import connect
    from todos.live.relay import rebuild_counts

    with connect() as conn:
        rebuild_counts(conn)


def relayed(timeout: float = 10.0) -> None:
    """Wait until the relay (the run's ``relay`` fixture) has relayed every committed change: the
    Board's counts and notifications are then up to date."""
    import time

    from todos.core.db import connect

    deadline = time.monotonic() + timeout
    with connect() as conn:
        while conn.execute("SELECT EXISTS (SELECT 1 FROM change_log) AS waiting").fetchone()["waiting"]:
            assert time.monotonic() < deadline, "the relay did not drain the change log"
            time.sleep(0.005)

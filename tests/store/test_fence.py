"""The lease-token fence: only the presented token of the open attempt applies a report.

Every mismatch (missing, extra, wrong, stale) is a conflict that changes nothing: the row, the
attempts and the audit trail are compared before and after.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.store.helpers import attempts, lapse, row, snapshot
from todos.core.db import execute
from todos.core.store import Conflict, Invalid
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

REPORTS = {
    "heartbeat": lambda agent, todo_id, token: agent_store.heartbeat(agent, todo_id, lease_token=token),
    "complete": lambda agent, todo_id, token: agent_store.complete(
        agent, todo_id, lease_token=token, result={"r": 1}, summary="s"
    ),
    "fail": lambda agent, todo_id, token: agent_store.fail(agent, todo_id, lease_token=token, result={"r": 1}),
    "release": lambda agent, todo_id, token: agent_store.release(agent, todo_id, lease_token=token),
}


def new(agent) -> str:
    return execute(agent_store.create(agent, queue="default", title="fenced")).todo.id


def test_a_fenced_claim_returns_a_token_and_stores_only_its_digest(agent):
    todo_id = new(agent)
    claim = execute(agent_store.claim(agent, todo_id, require_fence=True))
    raw = base64.urlsafe_b64decode(claim.lease_token + "=" * (-len(claim.lease_token) % 4))
    assert len(raw) == 16 and "=" not in claim.lease_token
    [a] = attempts(todo_id)
    assert bytes(a["lease_token_hash"]) == hashlib.sha256(raw).digest()
    assert claim.lease_token.encode() not in bytes(a["lease_token_hash"])


STATE_AFTER = {"heartbeat": "claimed", "complete": "done", "fail": "failed", "release": "pending"}


def test_the_right_token_applies(agent, subtests):
    for verb, report in REPORTS.items():
        with subtests.test(verb=verb):
            todo_id = new(agent)
            claim = execute(agent_store.claim(agent, todo_id, require_fence=True))
            execute(report(agent, todo_id, claim.lease_token))
            assert row(todo_id)["state"] == STATE_AFTER[verb]


def test_a_fenced_lease_refuses_other_tokens(agent, subtests):
    other = execute(agent_store.claim(agent, new(agent), require_fence=True)).lease_token
    for verb, report in REPORTS.items():
        todo_id = new(agent)
        claim = execute(agent_store.claim(agent, todo_id, require_fence=True))
        for mismatch, token in (
            ("missing", None),
            ("wrong", other),
            ("malformed", claim.lease_token + "x"),
            ("not base64", "!!!!"),
            ("empty", ""),
        ):
            with subtests.test(verb=verb, mismatch=mismatch):
                before = snapshot(todo_id)
                with pytest.raises(Conflict):
                    execute(report(agent, todo_id, token))
                assert snapshot(todo_id) == before
        execute(report(agent, todo_id, claim.lease_token))  # the holder is unaffected
        assert row(todo_id)["state"] == STATE_AFTER[verb]


def test_a_token_on_an_unfenced_lease_is_refused(agent, subtests):
    stray = execute(agent_store.claim(agent, new(agent), require_fence=True)).lease_token
    for verb, report in REPORTS.items():
        with subtests.test(verb=verb):
            todo_id = new(agent)
            execute(agent_store.claim(agent, todo_id))
            before = snapshot(todo_id)
            with pytest.raises(Conflict):
                execute(report(agent, todo_id, stray))
            assert snapshot(todo_id) == before
            execute(report(agent, todo_id, None))


def test_a_stale_token_after_a_takeover_is_refused(agent, subtests):
    """The same endpoint (so the same owner string) re-claims a lapsed lease with a new fence:
    the first worker's token is stale, and only the fence tells the two apart."""
    for verb, report in REPORTS.items():
        with subtests.test(verb=verb):
            todo_id = new(agent)
            first = execute(agent_store.claim(agent, todo_id, require_fence=True))
            lapse(todo_id)
            second = execute(agent_store.claim(agent, todo_id, require_fence=True))
            assert second.took_over and second.todo.owner == first.todo.owner
            before = snapshot(todo_id)
            with pytest.raises(Conflict):
                execute(report(agent, todo_id, first.lease_token))
            assert snapshot(todo_id) == before
            execute(report(agent, todo_id, second.lease_token))


def test_an_unfenced_takeover_makes_the_old_token_stale_too(agent):
    todo_id = new(agent)
    first = execute(agent_store.claim(agent, todo_id, require_fence=True))
    lapse(todo_id)
    execute(agent_store.claim(agent, todo_id))
    with pytest.raises(Conflict):
        execute(agent_store.complete(agent, todo_id, lease_token=first.lease_token))
    execute(agent_store.complete(agent, todo_id))


def test_the_token_survives_heartbeats(agent):
    todo_id = new(agent)
    claim = execute(agent_store.claim(agent, todo_id, require_fence=True))
    for _ in range(3):
        execute(agent_store.heartbeat(agent, todo_id, lease_token=claim.lease_token))
    execute(agent_store.complete(agent, todo_id, lease_token=claim.lease_token))


def test_complete_batch_checks_each_items_token(agent):
    a, b = new(agent), new(agent)
    ca = execute(agent_store.claim(agent, a, require_fence=True))
    cb = execute(agent_store.claim(agent, b, require_fence=True))
    results = execute(
        agent_store.complete_batch(
            agent, [{"id": a, "lease_token": cb.lease_token}, {"id": b, "lease_token": cb.lease_token}]
        )
    )
    assert [(r.ok, r.error and r.error.code) for r in results] == [(False, "conflict"), (True, None)]
    assert row(a)["state"] == "claimed"
    del ca


def test_operators_ignore_the_fence(world):
    """Force-release and cancel take a fenced agent lease away without its token, and a human
    holding a lease reports without one."""
    for verb in ("complete", "fail", "release"):
        todo_id = new(world.agent)
        execute(agent_store.claim(world.agent, todo_id, require_fence=True))
        execute(human_store.force_release(world.human, todo_id))
        execute(human_store.claim(world.human, todo_id))
        execute(getattr(human_store, verb)(world.human, todo_id))
        assert row(todo_id)["state"] == STATE_AFTER[verb]
    fenced = new(world.agent)
    execute(agent_store.claim(world.agent, fenced, require_fence=True))
    execute(human_store.cancel(world.human, fenced))
    assert row(fenced)["state"] == "canceled"


def test_bad_fence_arguments_are_invalid(agent):
    todo_id = new(agent)
    with pytest.raises(Invalid) as info:
        agent_store.claim(agent, todo_id, require_fence="yes")
    assert info.value.field == "require_fence"
    with pytest.raises(Invalid) as info:
        agent_store.complete(agent, todo_id, lease_token=12345)
    assert info.value.field == "lease_token"

"""The NOTIFY side of the live Board (docs/lifecycle.md, "Live notifications"), checked on a real
LISTEN connection: at most one notification per state-changing statement, sent only if it
commits, ids and small fields only, and none from row triggers."""

from __future__ import annotations

import json

import pytest

from tests import factories
from tests.factories import relayed
from todos.core.db import connect, execute
from todos.core.errors import Conflict
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store
from todos.core.store import teams as team_store

pytestmark = pytest.mark.usefixtures("store_db", "no_seen_stamps")

ALLOWED_KEYS = {"op", "team", "ids", "queues", "endpoints", "user"}


class Tap:
    """A LISTEN connection on ``board_events``. ``after(fn)`` runs a statement and returns exactly
    the notifications it caused: once the relay has drained the change log, a marker NOTIFY sent
    after arrives after them (PostgreSQL delivers notifications in commit order)."""

    def __init__(self):
        self.conn = connect()
        self.conn.execute("LISTEN board_events")
        self.conn.execute("LISTEN live_test_marker")
        self.n = 0

    def after(self, fn):
        self._collect()  # whatever the set-up statements sent
        result = fn()
        return result, self._collect()

    def _collect(self) -> list[str]:
        relayed()
        self.n += 1
        with connect() as other:
            other.execute("SELECT pg_notify('live_test_marker', %s)", [str(self.n)])
        got = []
        for note in self.conn.notifies(timeout=5):
            if note.channel == "live_test_marker":
                assert note.payload == str(self.n)
                return got
            got.append(note.payload)
        raise AssertionError("the marker never arrived")

    def close(self):
        self.conn.close()


@pytest.fixture
def tap():
    t = Tap()
    yield t
    t.close()


def check_small(raw: str) -> dict:
    assert len(raw.encode()) < 8000
    event = json.loads(raw)
    assert set(event) <= ALLOWED_KEYS, event  # never a payload, result, title or token
    return event


def test_each_single_todo_transition_sends_exactly_one_notification(tap):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    human = factories.member(team, factories.user())
    steps = [
        ("create", lambda: execute(agent_store.create(ep, queue="default", title="t", payload={"secret": "x" * 5000}))),
        ("claim", lambda: execute(agent_store.claim_next(ep, require_fence=True))),
    ]
    created, notes = tap.after(steps[0][1])
    todo = created.todo.id
    (event,) = [check_small(n) for n in notes]
    assert event == {
        "op": "create",
        "team": str(team.id),
        "ids": [todo],
        "queues": ["default"],
        "endpoints": [str(ep.endpoint_id)],
    }
    claim, notes = tap.after(steps[1][1])
    token = claim.lease_token
    sequence = [
        ("heartbeat", lambda: execute(agent_store.heartbeat(ep, todo, lease_token=token))),
        ("fail", lambda: execute(agent_store.fail(ep, todo, lease_token=token, summary="boom"))),
        ("retry", lambda: execute(human_store.retry(human, todo))),
        ("priority", lambda: execute(human_store.set_priority(human, todo, 3))),
        ("assign", lambda: execute(human_store.assign(human, todo, human.owner))),
        ("claim", lambda: execute(human_store.claim(human, todo))),
        ("heartbeat", lambda: execute(human_store.extend(human, todo))),
        ("release", lambda: execute(human_store.release(human, todo))),
        ("assign", lambda: execute(human_store.assign(human, todo, None))),
        ("claim", lambda: execute(agent_store.claim(ep, todo))),
        ("force_release", lambda: execute(human_store.force_release(human, todo))),
        ("claim", lambda: execute(agent_store.claim(ep, todo))),
        ("release", lambda: execute(agent_store.release(ep, todo))),
        ("claim", lambda: execute(agent_store.claim(ep, todo))),
        ("complete", lambda: execute(agent_store.complete(ep, todo, result={"big": "y" * 5000}))),
    ]
    for expected_op, step in sequence:
        _, notes = tap.after(step)
        events = [check_small(n) for n in notes]
        assert len(events) == 1, (expected_op, events)
        assert events[0]["ids"] == [todo]
        assert events[0]["op"] in (expected_op, "extend"), (expected_op, events)
    other = execute(agent_store.create(ep, queue="default", title="to cancel")).todo.id
    _, notes = tap.after(lambda: execute(human_store.cancel(human, other)))
    assert [json.loads(n)["op"] for n in notes] == ["cancel"]
    _, notes = tap.after(lambda: execute(human_store.pause_queue(human, team.id, "default")))
    assert [check_small(n) for n in notes] == [
        {"op": "pause", "team": str(team.id), "ids": [], "queues": ["default"], "endpoints": []}
    ]
    _, notes = tap.after(lambda: execute(human_store.resume_queue(human, team.id, "default")))
    assert [json.loads(n)["op"] for n in notes] == ["resume"]


def test_membership_changes_notify_the_team(tap):
    team = factories.team()
    user = factories.user()
    _, notes = tap.after(lambda: execute(team_store.set_member(None, team_id=team.id, user_id=user.id, role="viewer")))
    assert [check_small(n)["op"] for n in notes] == ["membership"]
    _, notes = tap.after(lambda: execute(team_store.remove_member(None, team_id=team.id, user_id=user.id)))
    (event,) = [check_small(n) for n in notes]
    assert event["op"] == "membership" and event["team"] == str(team.id) and event["user"] == user.id


def test_a_statement_that_changes_nothing_notifies_nobody(tap):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(ep, queue="default", title="t")).todo.id

    def stale_heartbeat():
        with pytest.raises(Conflict):
            execute(agent_store.heartbeat(ep, todo))  # pending: nothing to heartbeat

    _, notes = tap.after(stale_heartbeat)
    assert notes == []
    _, notes = tap.after(lambda: execute(background_store.reap()))
    assert notes == []


def test_a_rolled_back_statement_notifies_nobody(tap):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))

    def rolled_back():
        with connect(autocommit=False) as conn:
            execute(agent_store.create(ep, queue="default", title="never"), conn)
            conn.rollback()

    _, notes = tap.after(rolled_back)
    assert notes == []


def test_multi_row_statements_send_one_notification_per_chunk_of_at_most_25_ids(tap):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    human = factories.member(team, factories.user())
    with connect() as conn:
        conn.execute("SET synchronous_commit TO off")
        ids = [execute(agent_store.create(ep, queue="default", title=f"t{i}"), conn).todo.id for i in range(120)]
        for _ in range(2):
            execute(agent_store.claim_batch(ep, max=100), conn)
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second'")  # no NOTIFY: no trigger
    swept, notes = tap.after(lambda: execute(background_store.reap()))
    events = [check_small(n) for n in notes]
    assert swept.count == 120
    assert len(events) == 5 and all(e["op"] == "reap" and len(e["ids"]) <= 25 for e in events)
    assert sorted(i for e in events for i in e["ids"]) == sorted(ids)
    _, notes = tap.after(lambda: execute(human_store.cancel_many(human, ids)))
    events = [check_small(n) for n in notes]
    assert len(events) == 5 and {e["op"] for e in events} == {"cancel"}
    assert sorted(i for e in events for i in e["ids"]) == sorted(ids)


def test_one_statement_over_several_teams_sends_one_notification_per_team(tap):
    """The reaper sweeps every team at once; each team's consumers get their own notification."""
    teams = [factories.team() for _ in range(3)]
    agents = [factories.agent(factories.endpoint(t)) for t in teams]
    for ep in agents:
        execute(agent_store.create(ep, queue="default", title="t"))
        execute(agent_store.claim_next(ep))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second'")
    _, notes = tap.after(lambda: execute(background_store.reap()))
    assert sorted(check_small(n)["team"] for n in notes) == sorted(str(t.id) for t in teams)


def test_revoking_an_endpoint_with_live_todos_sends_one_notification(tap):
    team = factories.team()
    vended = factories.endpoint(team)
    ep = factories.agent(vended)
    execute(agent_store.create(ep, queue="default", title="t"))
    _, notes = tap.after(lambda: execute(endpoint_store.revoke(None, vended.endpoint.id)))
    assert len(notes) == 1


def test_no_row_trigger_sends_notifications():
    with connect() as conn:
        rows = conn.execute(
            """SELECT c.relname, t.tgname, p.prosrc FROM pg_trigger t
               JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
               WHERE NOT t.tgisinternal AND c.relname IN ('todos', 'todo_attempts', 'endpoints', 'team_members')"""
        ).fetchall()
    assert [r for r in rows if "notify" in r["prosrc"].lower()] == []

"""The Board's reads on a real streaming replica (docs/deployment.md, the read replica).

A hot standby of the run's embedded PostgreSQL (``pg_basebackup -R``, tests/support/replica.py)
serves the Board's pages. What proves a page was read there: with the replica's replay paused, a
todo written on the primary is missing from the page although the primary has it. Then: the
human's own action sends their reads to the primary until the replica has replayed it
(read-your-writes); a lagging or stopped replica is not read and the page says so, and reads
return to it once it is back; the agent API always reads the primary.
"""

from __future__ import annotations

import time

import psycopg
import pytest
from django.urls import reverse

from tests import factories
from tests.support import replica as support
from tests.support.board import login
from todos.core import db, replica
from todos.core.db import execute
from todos.core.store import agent as agent_store

pytestmark = [pytest.mark.slow]


def dbname() -> str:
    return psycopg.conninfo.conninfo_to_dict(db.conninfo())["dbname"]


@pytest.fixture(scope="module")
def standby(django_db_setup):
    reason = support.missing_reason(db.conninfo())
    if reason:
        pytest.skip(f"no read replica can be made here: {reason}")
    made = support.start_replica(db.conninfo())
    try:
        yield made
    finally:
        made.destroy()


@pytest.fixture
def reads(settings, standby, world):
    """The Board reading ``standby``, caught up with the world; replay running again after."""
    if not standby.running():
        standby.start()
    standby.resume_replay()
    standby.wait_caught_up()
    settings.BOARD_READ_REPLICA_URL = standby.url(dbname())
    settings.BOARD_READ_REPLICA_MAX_LAG = 30.0
    replica.reset()
    yield standby
    replica.reset()
    if not standby.running():
        standby.start()
    standby.resume_replay()


def todo(world, title: str):
    return execute(agent_store.create(world.agent, queue="default", title=title)).todo


def on_primary(todo_id: str) -> bool:
    with db.connect() as conn:
        return conn.execute("SELECT 1 FROM todos WHERE id = %s", (todo_id,)).fetchone() is not None


def on_replica(standby, todo_id: str) -> bool:
    with standby.connect(dbname()) as conn:
        return conn.execute("SELECT 1 FROM todos WHERE id = %s", (todo_id,)).fetchone() is not None


def page(client) -> str:
    response = client.get(reverse("todo_list"), {"state": "all"})
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def fresh_state() -> None:
    """Let the next read check the replica again (its state is kept up to a second)."""
    replica.forget_state()


def test_board_pages_read_the_replica_and_a_human_reads_their_own_writes(reads, world):
    client = login(world.alice_user)
    seen = todo(world, "replayed before the pause")
    reads.wait_caught_up()
    assert "replayed before the pause" in page(client)

    reads.pause_replay()
    hidden = todo(world, "written while replay is paused")
    assert on_primary(hidden.id) and not on_replica(reads, hidden.id)
    body = page(client)
    assert "replayed before the pause" in body
    assert "written while replay is paused" not in body  # the page was read on the replica
    assert "reads from primary" not in body
    other = login(world.vera_user)
    assert "written while replay is paused" not in page(other)
    for name in ("overview", "agents", "activity", "charts", "schedules", "endpoints", "teams"):
        assert login(world.alice_user).get(reverse(name)).status_code == 200, name

    # Alice acts (a todo of her own, through the Board): her next pages come from the primary,
    # with everything the primary has, until the replica has replayed her action.
    response = client.post(reverse("todo_new"), {"target": f"{world.acme_ep.id}|default", "title": "alice by hand"})
    assert response.status_code in (200, 302, 303), response.content[:500]
    assert client.session.get(replica.SESSION_KEY)
    body = page(client)
    assert "alice by hand" in body and "written while replay is paused" in body
    assert "alice by hand" not in page(other)  # vera did nothing: she still reads the replica
    assert client.session.get(replica.SESSION_KEY)

    reads.resume_replay()
    reads.wait_caught_up()
    body = page(client)
    assert "alice by hand" in body
    assert client.session.get(replica.SESSION_KEY) is None  # replayed: nothing left to wait for

    # Back on the replica: a write it has not replayed is missing again.
    reads.pause_replay()
    todo(world, "second write while paused")
    assert "second write while paused" not in page(client)
    assert seen.id


def test_a_lagging_replica_is_not_read_and_the_board_says_so(reads, world, settings):
    settings.BOARD_READ_REPLICA_MAX_LAG = 1.0
    client = login(world.alice_user)
    reads.pause_replay()
    behind = todo(world, "the replica lags behind this")
    time.sleep(1.5)
    fresh_state()
    body = page(client)
    assert "the replica lags behind this" in body  # read on the primary
    assert "reads from primary: replica lagging" in body
    assert not on_replica(reads, behind.id)

    reads.resume_replay()
    reads.wait_caught_up()
    fresh_state()
    body = page(client)
    assert "the replica lags behind this" in body
    assert "reads from primary" not in body

    # The lag is judged by the last transaction the replica replayed: one a moment ago, then a
    # write it has not replayed yet, is a lag within the threshold.
    todo(world, "replayed just now")
    reads.wait_caught_up()
    reads.pause_replay()
    todo(world, "short lag")
    fresh_state()
    assert "short lag" not in page(client)  # within the threshold: the replica is read


def test_a_stopped_replica_is_not_read_and_reads_return_when_it_is_back(reads, world):
    client = login(world.alice_user)
    assert page(client)  # the replica's pool holds a connection now
    reads.stop()
    written = todo(world, "written while the replica is down")
    fresh_state()
    started = time.monotonic()
    body = page(client)
    assert time.monotonic() - started < replica.CONNECT_TIMEOUT_SECONDS + 3
    assert "written while the replica is down" in body
    assert "reads from primary: replica unreachable" in body
    assert login(world.vera_user).get(reverse("overview")).status_code == 200

    reads.start()
    reads.wait_caught_up()
    assert on_replica(reads, written.id)
    fresh_state()
    body = page(client)
    assert "reads from primary" not in body
    reads.pause_replay()
    todo(world, "after the replica came back")
    assert "after the replica came back" not in page(client)  # the replica is read again


def test_a_replica_that_dies_mid_request_is_left_for_the_primary(reads, world):
    """The state was checked a moment ago, then the replica went away: the page still answers,
    read on the primary."""
    client = login(world.alice_user)
    assert page(client)
    assert replica.replica_state().usable
    reads.stop()
    todo(world, "after the replica died")
    body = page(client)  # state not re-checked: the statement on the replica fails first
    assert "after the replica died" in body


def test_the_agent_api_reads_the_primary(reads, world, api):
    token = factories.endpoint(world.acme, slug="api-reader").token
    reads.pause_replay()
    created = api.ok(token, "create_for", {"queue": "default", "title": "an agent writes"}, status=201)["todo"]
    assert not on_replica(reads, created["id"])
    assert api.ok(token, "get_todo", {"id": created["id"]})["todo"]["title"] == "an agent writes"
    assert created["id"] in [t["id"] for t in api.ok(token, "list_todos", {})["todos"]]
    assert "an agent writes" not in page(login(world.alice_user))  # the Board reads the replica


def test_without_a_replica_everything_reads_the_primary(world, settings):
    settings.BOARD_READ_REPLICA_URL = ""
    replica.reset()
    client = login(world.alice_user)
    todo(world, "no replica configured")
    client.post(reverse("todo_new"), {"target": f"{world.acme_ep.id}|default", "title": "posted"})
    assert replica.SESSION_KEY not in client.session
    body = page(client)
    assert "no replica configured" in body and "posted" in body
    assert "read-replica-note" not in body


def test_a_live_refresh_reads_what_the_primary_had_when_it_was_asked(reads, world):
    """A live refresh follows a change someone else committed: a replica that has not replayed
    it (within a tenth of a second) is not read for it; a page load still reads the replica."""
    client = login(world.alice_user)
    reads.pause_replay()
    todo(world, "someone else's change")
    live = client.get(reverse("todo_list"), {"state": "all"}, headers={replica.LIVE_HEADER: "1", "HX-Request": "true"})
    assert live.status_code == 200
    assert "someone else&#x27;s change" in live.content.decode() or "someone else's change" in live.content.decode()
    assert "someone else" not in page(client)


def test_a_replica_url_naming_a_primary_is_not_read(world, settings):
    """BOARD_READ_REPLICA_URL on a server that is not a standby (a promoted replica, a mistake):
    it may have diverged from the primary, so it is not read, and the Board says why."""
    from tests.support.live_server import database_url

    settings.BOARD_READ_REPLICA_URL = database_url()
    replica.reset()
    try:
        body = page(login(world.alice_user))
        assert "reads from primary: replica is not a standby" in body
    finally:
        replica.reset()


def test_the_drawer_reads_the_replica_and_a_live_refresh_of_it_the_primary(reads, world):
    client = login(world.alice_user)
    reads.pause_replay()
    hidden = todo(world, "a todo only the primary has")
    drawer = reverse("todo_drawer", args=[hidden.id])
    assert client.get(drawer, headers={"HX-Request": "true"}).status_code == 404  # not replayed yet
    live = client.get(drawer, headers={"HX-Request": "true", replica.LIVE_HEADER: "1"})
    assert live.status_code == 200 and "a todo only the primary has" in live.content.decode()
    reads.resume_replay()
    reads.wait_caught_up()
    assert client.get(drawer, headers={"HX-Request": "true"}).status_code == 200


def test_concurrent_page_reads_check_the_replica_once_and_never_deadlock(reads, world, monkeypatch):
    """Eight threads read at once with no state known: one checks (holding the state lock while
    it takes replica and primary connections from their pools), the others wait for it, nobody
    deadlocks, and within the second nobody checks again."""
    import threading

    checks = []
    real_check = replica.check

    def counted():
        checks.append(threading.get_ident())
        return real_check()

    monkeypatch.setattr(replica, "check", counted)
    replica.reset()
    barrier = threading.Barrier(8)
    targets, errors = [], []

    def read():
        try:
            barrier.wait(timeout=10)
            with replica.routed(replica.Route()) as route, replica.read_connection() as conn:
                conn.execute("SELECT 1").fetchone()
                assert route is not None
                targets.append(route.target)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a reader is stuck"
    assert not errors, errors
    assert targets == ["replica"] * 8
    assert len(checks) == 1


def test_the_benchmark_harness_drains_and_renders_pages_on_the_replica(reads, world):
    """bench/replica_reads.py's parts at a tiny size, so they cannot rot between full runs."""
    from django.test import Client

    from bench import replica_reads
    from bench.board_scale import Page
    from bench.common import connect
    from bench.serving import start_board, vend_agent

    conninfo = db.conninfo()
    with connect(conninfo) as conn:
        scope, token, _ = vend_agent(conn, (replica_reads.QUEUE,))
    client = Client()
    client.force_login(world.alice_user)
    pages = [Page("list", "/todos/"), Page("overview", "/")]
    with start_board(conninfo, label="agents") as server:
        with replica_reads.PageLoad(client, pages, 0.01) as load:
            rate = replica_reads.drain(conninfo, server, scope, token, 20, 2)
    assert rate > 0 and len(load.times) >= 2
    assert replica.status_note() == ""

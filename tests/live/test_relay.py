"""The change log and its relay (docs/lifecycle.md, "Live notifications"): statements record their
change in the same statement, one elected relay turns the log into Board notifications and exact
counts, and neither a rollback, a crash of the relay mid-pass nor a relay election loses or
duplicates anything."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from tests import factories
from tests.factories import relayed
from tests.support.invariants import broken_counts
from tests.support.live import board_socket, next_message, run
from tests.support.live_server import ROOT, server_environment
from todos.core.db import connect, execute
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as human_store
from todos.core.store import teams as team_store
from todos.live import relay as relay_module

pytestmark = pytest.mark.usefixtures("store_db", "no_seen_stamps")

GROUP_BY = """SELECT endpoint_id, queue, todo_board_state(state, next_retry_at) AS state, count(*) AS n
              FROM todos GROUP BY 1, 2, 3"""


def exact_counts() -> None:
    """Once relayed, the counts are GROUP BY over todos, row for row."""
    relayed()
    with connect() as conn:
        counted = {
            (r["endpoint_id"], r["queue"], r["state"]): r["n"]
            for r in conn.execute("SELECT * FROM todo_counts WHERE n <> 0").fetchall()
        }
        actual = {(r["endpoint_id"], r["queue"], r["state"]): r["n"] for r in conn.execute(GROUP_BY).fetchall()}
        assert not conn.execute("SELECT counts_stale FROM relay_state").fetchone()["counts_stale"]
    assert counted == actual


def log_rows() -> list[dict]:
    with connect() as conn:
        return conn.execute("SELECT * FROM change_log ORDER BY id").fetchall()


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {timeout} s")


def relay_process() -> subprocess.Popen:
    """A loops process (``manage.py reaper``): a relay candidate in a process of its own."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "reaper"],
        cwd=ROOT,
        env=server_environment(BOARD_RELAY="1", BOARD_RELAY_ELECTION_SECONDS="0.2"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def holder() -> str | None:
    """Who holds the relay lock now: ``pid:<backend pid>`` of the session, from pg_locks."""
    with connect() as conn:
        row = conn.execute(
            """SELECT a.application_name, a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE l.locktype = 'advisory' AND l.granted
                 AND ((l.classid::bigint << 32) | l.objid::bigint) = %s""",
            (relay_module.RELAY_LOCK,),
        ).fetchone()
    return row and f"{row['application_name']}:{row['pid']}"


# --- the log is written inside the statement ---------------------------------------------------


def test_a_rolled_back_transition_records_nothing_and_a_committed_one_records_its_states(relay):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    relayed()
    with relay.stopped():
        with connect(autocommit=False) as conn:
            execute(agent_store.create(ep, queue="default", title="never"), conn)
            conn.rollback()
        assert log_rows() == []
        todo = execute(agent_store.create(ep, queue="default", title="t", payload={"secret": "s3"})).todo
        execute(agent_store.claim(ep, todo.id))
        execute(agent_store.fail(ep, todo.id))
        rows = log_rows()
    assert [(r["op"], r["todo_id"], r["state_before"], r["state_after"]) for r in rows] == [
        ("create", todo.id, None, "pending"),
        ("claim", todo.id, "pending", "claimed"),
        ("fail", todo.id, "claimed", "retry"),
    ]
    assert all(r["team_id"] == team.id and r["endpoint_id"] == ep.endpoint_id and r["queue"] == "default" for r in rows)
    assert "s3" not in json.dumps([str(r) for r in rows])  # never a payload
    exact_counts()


def test_claims_and_completions_send_no_notify_of_their_own(relay):
    """The agents' hot path writes the log and nothing else: with no relay, a claim and a
    completion reach no listener at all (the relay sends them later)."""
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(ep, queue="default", title="t")).todo
    relayed()
    with relay.stopped(), connect() as listener:
        listener.execute("LISTEN board_events")
        listener.execute("LISTEN board_ready")
        execute(agent_store.claim_next(ep))
        execute(agent_store.heartbeat(ep, todo.id))
        execute(agent_store.complete(ep, todo.id))
        assert list(listener.notifies(timeout=0.5)) == []
        assert [r["op"] for r in log_rows()] == ["claim", "heartbeat", "complete"]
    exact_counts()


# --- every kind of statement reaches the Board ---------------------------------------------------


def test_every_kind_of_statement_reaches_the_board_through_the_relay(tenancy):
    t = tenancy
    ep, human = t.agent_a, t.human_a
    admin = factories.member(t.team_a, factories.user(), "admin")

    def todo(**kw):
        return execute(agent_store.create(ep, queue="default", title="t", **kw)).todo.id

    def claimed(**kw):
        todo_id = todo(**kw)
        execute(agent_store.claim(ep, todo_id))
        return todo_id

    def lapsed(**kw):
        todo_id = claimed(**kw)
        with connect() as conn:
            conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo_id,))
        return todo_id

    def due(**kw):
        todo_id = claimed(**kw)
        execute(agent_store.fail(ep, todo_id))
        with connect() as conn:
            conn.execute("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo_id,))
        return todo_id

    spare = factories.endpoint(t.team_a, slug="spare-ep")
    past = datetime.now(UTC) - timedelta(minutes=1)
    steps = [
        ("create", lambda: todo()),
        ("claim", lambda: execute(agent_store.claim_next(ep))),
        ("claim", lambda: (todo(), todo(), execute(agent_store.claim_batch(ep, max=2)))),
        ("heartbeat", lambda: execute(agent_store.heartbeat(ep, claimed()))),
        ("complete", lambda: execute(agent_store.complete(ep, claimed()))),
        ("complete", lambda: execute(agent_store.complete_batch(ep, [{"id": claimed()}]))),
        ("fail", lambda: execute(agent_store.fail(ep, claimed()))),
        ("release", lambda: execute(agent_store.release(ep, claimed()))),
        ("claim", lambda: execute(human_store.claim(human, todo()))),
        ("force_release", lambda: execute(human_store.force_release(human, claimed()))),
        ("retry", lambda: execute(human_store.retry(human, due()))),
        ("retry", lambda: execute(human_store.retry_many(human, [due()]))),
        ("cancel", lambda: execute(human_store.cancel(human, todo()))),
        ("cancel", lambda: execute(human_store.cancel_many(human, [todo()]))),
        ("assign", lambda: execute(human_store.assign(human, todo(), human.owner))),
        ("priority", lambda: execute(human_store.set_priority(human, todo(), 4))),
        (
            "create",
            lambda: execute(human_store.create(human, endpoint_id=ep.endpoint_id, queue="default", title="by hand")),
        ),
        ("pause", lambda: execute(human_store.pause_queue(human, t.team_a.id, "default"))),
        ("resume", lambda: execute(human_store.resume_queue(human, t.team_a.id, "default"))),
        ("reap", lambda: (lapsed(), execute(background_store.reap()))),
        ("requeue", lambda: (due(), execute(background_store.requeue_due_retries()))),
        (
            "purge",
            lambda: (
                execute(human_store.cancel(human, todo())),
                execute(background_store.purge_terminal(older_than_days=0)),
            ),
        ),
        ("endpoint", lambda: factories.endpoint(t.team_a, slug="vended-now")),
        (
            "endpoint",
            lambda: execute(endpoint_store.set_scopes(None, spare.endpoint.id, verbs=["claim"], queues=["default"])),
        ),
        ("endpoint", lambda: execute(endpoint_store.set_default_lease(None, spare.endpoint.id, 120))),
        ("endpoint", lambda: execute(endpoint_store.set_capabilities(None, spare.endpoint.id, ["gpu"]))),
        ("endpoint", lambda: execute(endpoint_store.set_own_default_lease(spare.endpoint.id, 300))),
        ("endpoint", lambda: execute(endpoint_store.rotate(None, spare.endpoint.id))),
        ("seen", lambda: execute(endpoint_store.touch_last_seen(spare.endpoint.id))),
        ("revoke", lambda: execute(endpoint_store.revoke(None, spare.endpoint.id))),
        ("endpoint", lambda: execute(endpoint_store.delete(admin, spare.endpoint.id))),
        (
            "revoke",
            lambda: (
                execute(
                    endpoint_store.vend(
                        None,
                        team_id=t.team_a.id,
                        name="x",
                        slug="expiring",
                        verbs=["claim"],
                        queues=["default"],
                        expires_at=past,
                    )
                ),
                execute(endpoint_store.expire_due()),
            ),
        ),
        (
            "membership",
            lambda: execute(
                team_store.set_member(None, team_id=t.team_a.id, user_id=factories.user().id, role="viewer")
            ),
        ),
    ]

    async def scenario():
        async with board_socket(t.cookie_a) as socket:
            for op, step in steps:
                await asyncio.to_thread(step)
                deadline = asyncio.get_running_loop().time() + 5
                while True:
                    message = await next_message(socket, timeout=max(0.1, deadline - asyncio.get_running_loop().time()))
                    if message["type"] == "changed" and op in message["ops"]:
                        break

    run(scenario)
    exact_counts()


# --- one relay, failover, crash -------------------------------------------------------------------


def test_two_relays_never_run_at_once_and_another_takes_over(relay, settings):
    settings.BOARD_RELAY_ELECTION_SECONDS = 0.1
    with relay.stopped():
        candidates = [relay_module.Relay(name=f"candidate-{i}").start() for i in range(4)]
        try:
            wait_for(lambda: any(c.leading.is_set() for c in candidates), 5, "no candidate was elected")
            leaders = []
            for _ in range(100):  # sampled over ~2 s of passes
                leading = [c for c in candidates if c.leading.is_set()]
                assert len(leading) <= 1
                leaders += leading
                time.sleep(0.02)
            assert holder() is not None and holder().startswith("board-relay:")
            first = leaders[-1]
            first.stop()
            started = time.monotonic()
            successor = wait_for(lambda: [c for c in candidates if c.leading.is_set()], 5, "nobody took over")
            assert len(successor) == 1 and successor[0] is not first
            assert time.monotonic() - started < 3
            team = factories.team()
            execute(
                agent_store.create(
                    factories.agent(factories.endpoint(team)), queue="default", title="after the election"
                )
            )
            relayed()  # the successor relays
        finally:
            for c in candidates:
                c.stop()
    exact_counts()


def test_the_holder_killed_mid_pass_loses_and_duplicates_nothing(relay):
    """SIGKILL the elected relay (a loops process) while its pass is open: its transaction rolls
    back whole, another candidate takes over within seconds, and every committed change is
    notified exactly once with the counts exact."""
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    relayed()
    with relay.stopped():
        process = relay_process()
        try:
            wait_for(lambda: holder() and holder().startswith("board-relay"), 20, "the loops process was not elected")
            relay_pid = int(holder().split(":")[1])
            with connect() as listener, connect(autocommit=False) as blocker:
                listener.execute("LISTEN board_events")
                blocker.execute("LOCK TABLE todo_counts IN EXCLUSIVE MODE")  # the next pass waits here
                ids = [execute(agent_store.create(ep, queue="default", title=f"t{i}")).todo.id for i in range(30)]

                def waiting() -> bool:
                    with connect() as conn:
                        return conn.execute(
                            "SELECT wait_event_type = 'Lock' AND state = 'active' AS w "
                            "FROM pg_stat_activity WHERE pid = %s",
                            (relay_pid,),
                        ).fetchone()["w"]

                wait_for(waiting, 10, "the relay's pass never reached the lock")
                process.send_signal(signal.SIGKILL)
                process.wait(10)
                blocker.rollback()
                assert len(log_rows()) == 30  # the killed pass took nothing with it
                killed_at = time.monotonic()
                relay.start()
                wait_for(lambda: holder() and not holder().endswith(f":{relay_pid}"), 10, "nobody took over")
                assert time.monotonic() - killed_at < 5
                relayed()
                got = []
                for note in listener.notifies(timeout=1):
                    got.append(json.loads(note.payload))
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    created = [i for e in got if e["op"] == "create" for i in e["ids"]]
    assert sorted(created) == sorted(ids)  # every one, once
    exact_counts()


def test_a_relay_that_loses_its_connection_stands_again_and_resumes(relay):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    relayed()
    with connect() as conn:
        pid = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'board-relay' AND pid <> pg_backend_pid()"
        ).fetchone()["pid"]
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    execute(agent_store.create(ep, queue="default", title="while it reconnects"))
    relayed(timeout=15)
    exact_counts()


# --- counts ----------------------------------------------------------------------------------------


def test_after_a_mixed_workload_and_a_relay_crash_every_count_equals_group_by(relay):
    team = factories.team()
    eps = [factories.endpoint(team, queues=("default", "email")) for _ in range(2)]
    agents = [factories.agent(e) for e in eps]
    human = factories.member(team, factories.user(), "operator")
    for agent in agents:
        for i in range(40):
            execute(agent_store.create(agent, queue=("default", "email")[i % 2], title=f"t{i}", max_attempts=2))
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker(agent, n):
        try:
            while not stop.is_set():
                claim = execute(agent_store.claim_next(agent))
                if claim is None:
                    return
                todo_id = claim.todo.id
                execute(agent_store.heartbeat(agent, todo_id))
                choice = hash((todo_id, n)) % 4
                if choice == 0:
                    execute(agent_store.fail(agent, todo_id))
                elif choice == 1:
                    execute(agent_store.release(agent, todo_id))
                else:
                    execute(agent_store.complete(agent, todo_id))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(agents[n % 2], n)) for n in range(6)]
    for th in threads:
        th.start()
    time.sleep(0.3)
    # a relay crash in the middle: its backend is killed, and it comes back by itself
    with connect() as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'board-relay'")
    for th in threads:
        th.join(60)
    stop.set()
    assert not errors, errors
    with connect() as conn:
        conn.execute("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE next_retry_at IS NOT NULL")
    execute(background_store.requeue_due_retries())
    lapse = execute(agent_store.create(agents[0], queue="default", title="lapses")).todo.id
    execute(agent_store.claim(agents[0], lapse))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (lapse,))
    execute(background_store.reap())
    dead = [
        r["id"]
        for r in connect().execute("SELECT id FROM todos WHERE state = 'failed' AND next_retry_at IS NULL").fetchall()
    ]
    execute(human_store.retry_many(human, dead[: len(dead) // 2]))
    pending = [r["id"] for r in connect().execute("SELECT id FROM todos WHERE state = 'pending' LIMIT 10").fetchall()]
    execute(human_store.cancel_many(human, pending))
    execute(background_store.purge_terminal(older_than_days=0))
    execute(endpoint_store.revoke(None, eps[1].endpoint.id))
    execute(
        endpoint_store.vend(
            None,
            team_id=team.id,
            name="short",
            slug="short-lived",
            verbs=["claim"],
            queues=["default"],
            expires_at=datetime.now(UTC) - timedelta(seconds=1),
        )
    )
    execute(endpoint_store.expire_due())
    exact_counts()
    with connect() as conn:
        assert relay_module.drift(conn) == []


def test_the_cap_drops_an_undrained_log_and_the_next_relay_rebuilds_the_counts(relay):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    relayed()
    with relay.stopped():
        for i in range(5):
            execute(agent_store.create(ep, queue="default", title=f"t{i}"))
        with connect() as conn:
            conn.execute("UPDATE change_log SET at = at - interval '10 minutes'")
            conn.execute("UPDATE relay_state SET alive_at = now()")
            assert relay_module.cap_change_log(conn, max_age=60) == 0  # a relay proved alive lately: not capped
            conn.execute("UPDATE relay_state SET alive_at = now() - interval '10 minutes'")
            with connect() as passing:  # a pass running (its lock held): a relay is alive, no cap
                passing.execute("SELECT pg_advisory_lock(%s)", (relay_module.PASS_LOCK,))
                assert relay_module.cap_change_log(conn, max_age=60) == 0
            assert relay_module.cap_change_log(conn, max_age=60) == 5
            assert log_rows() == []
            assert conn.execute("SELECT counts_stale FROM relay_state").fetchone()["counts_stale"]
            assert broken_counts(conn)  # the pending todos are not counted
    # the relay comes back: it rebuilds first
    wait_for(
        lambda: not connect().execute("SELECT counts_stale FROM relay_state").fetchone()["counts_stale"],
        10,
        "the relay did not rebuild",
    )
    exact_counts()


def test_a_count_driven_below_zero_is_rebuilt_by_the_relay(relay):
    """Counts drift only behind the store's back; the relay notices a negative count and heals."""
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(ep, queue="default", title="t")).todo
    relayed()
    with connect() as conn:  # behind the store's back: a count lost
        conn.execute("DELETE FROM todo_counts WHERE state = 'pending'")
    execute(agent_store.claim(ep, todo.id))  # pending → claimed: pending would go to -1
    wait_for(lambda: not broken_counts(connect()), 10, "the counts were not rebuilt")
    exact_counts()


def test_recount_reports_and_corrects_drift(relay):
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    for _ in range(3):
        execute(agent_store.create(ep, queue="default", title="t"))
    relayed()
    out = StringIO()
    call_command("recount", stdout=out)
    assert out.getvalue().strip() == "counts: exact, nothing to correct"
    with connect() as conn:
        conn.execute("UPDATE todo_counts SET n = 7 WHERE state = 'pending'")
    out = StringIO()
    call_command("recount", stdout=out)
    assert "corrected 1 drifted" in out.getvalue()
    assert f"{ep.endpoint_id} default pending: 7 -> 3" in out.getvalue()
    exact_counts()


def test_a_rebuild_keeps_the_minute_that_straddles_an_hour_ago(relay):
    """Work finished in the minute that began just over an hour ago, after that instant, is rebuilt
    into that minute's row (the delete and the rebuild share one boundary: no duplicate key)."""
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(ep, queue="default", title="t")).todo
    execute(agent_store.claim(ep, todo.id))
    execute(agent_store.complete(ep, todo.id))
    relayed()
    with connect() as conn:
        # finished 0.2 s after "an hour ago": its minute began before then (unless the hour-ago
        # instant falls in a minute's first 0.2 s, when the row is the next minute's: still one)
        conn.execute(
            "UPDATE todos SET completed_at = now() - interval '1 hour' + interval '0.2 s' WHERE id = %s", (todo.id,)
        )
        conn.execute("DELETE FROM todo_finished_minutes")
        conn.execute(
            """INSERT INTO todo_finished_minutes (endpoint_id, queue, minute, done, dead)
               SELECT endpoint_id, queue, date_trunc('minute', completed_at), 1, 0 FROM todos WHERE id = %s""",
            (todo.id,),
        )
        relay_module.rebuild_counts(conn)
        rows = conn.execute("SELECT done, dead FROM todo_finished_minutes").fetchall()
    assert rows == [{"done": 1, "dead": 0}]


@pytest.mark.parametrize(
    ("taken", "wait", "expected"),
    [
        (500, 0.005, None),  # a full batch: more is waiting, run again at once
        (12, 0.005, 0.010),  # a steady stream: twice the interval, twice the rows per pass
        (relay_module.STREAM_ROWS, 0.005, 0.010),
        (relay_module.STREAM_ROWS - 1, 0.005, 0.005),  # some changes: the interval
        (1, 0.08, 0.005),  # changes after a quiet spell: back to the interval at once
        (0, 0.005, 0.010),  # none: the wait doubles…
        (0, 0.08, 0.1),  # …up to the idle interval
    ],
)
def test_the_relay_paces_itself_by_what_each_pass_carried(taken, wait, expected):
    assert relay_module.next_wait(taken, wait, busy=0.005, idle=0.1, batch=500) == expected


def test_a_slow_pass_is_followed_by_a_longer_wait():
    """Passes slowed by an old snapshot (dead versions to walk) run less often, not back to back;
    an ordinary one waits its interval, and the longest wait is bounded."""
    waits = [
        relay_module.next_wait(3, 0.005, busy=0.005, idle=0.1, batch=500, spent=spent)
        for spent in (0.0005, 0.004, 0.02, 5.0)
    ]
    full = relay_module.next_wait(500, 0.005, busy=0.005, idle=0.1, batch=500, spent=0.02)
    assert waits == [0.005, relay_module.DUTY * 0.004, relay_module.DUTY * 0.02, relay_module.DUTY_WAIT_MAX]
    assert full is None


def test_a_pass_reports_its_statements_own_time_not_the_wait_for_the_pass_lock(relay):
    """A pass that waited for the pass lock (a rebuild, a test holding it) is not a slow pass."""
    with relay.stopped(), connect() as relay_conn, connect(autocommit=False) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (relay_module.PASS_LOCK,))
        done: list = []
        thread = threading.Thread(target=lambda: done.append(relay_module.relay_pass(relay_conn)))
        thread.start()
        time.sleep(0.5)
        holder.rollback()
        thread.join(10)
    assert done and done[0].took < 0.4, done


# --- the floor: passes skip what was taken, and never a straggler ------------------------------


class Clock:
    """The watch's clock, moved by the test past its check interval."""

    def __init__(self):
        self.now = 0.0

    def tick(self) -> float:
        self.now += relay_module.FloorWatch.CHECK_SECONDS + 0.001
        return self.now


def watched_pass(conn, watch: relay_module.FloorWatch, clock: Clock) -> relay_module.Pass:
    watch.before_pass(conn, clock.tick())
    done = relay_module.relay_pass(conn, batch=500, floor=watch.floor, filenode=watch.filenode)
    watch.after_pass(conn, done, 500, clock.tick())
    return done


def test_the_floor_waits_for_a_straggler_and_the_straggler_is_relayed(relay, tenancy):
    """A transaction inserts a log row and stays open while later rows commit and are relayed: the
    floor does not pass its row; once it commits, a pass takes it, then the floor moves past it."""
    ep = tenancy.agent_a
    relayed()
    with relay.stopped(), connect() as relay_conn:
        watch, clock = relay_module.FloorWatch(), Clock()
        with connect(autocommit=False) as straggler:
            execute(agent_store.create(ep, queue="default", title="straggler"), straggler)
            straggler_id = straggler.execute("SELECT max(id) AS id FROM change_log").fetchone()["id"]
            for i in range(4):
                execute(agent_store.create(ep, queue="default", title=f"later {i}"))
                watched_pass(relay_conn, watch, clock)
            floor_while_open = watch.floor
            straggler.commit()
        taken = watched_pass(relay_conn, watch, clock)
        for _ in range(3):
            watched_pass(relay_conn, watch, clock)
        floor_after = watch.floor
        left = log_rows()
    assert floor_while_open <= straggler_id, (floor_while_open, straggler_id)
    assert taken.taken == 1 and taken.high == straggler_id  # the straggler, relayed after its commit
    assert floor_after > straggler_id
    assert left == []
    exact_counts()


def test_a_transaction_that_only_reads_does_not_hold_the_floor_back(relay, tenancy):
    """The held transaction of the vacuum-starving kind (it has an xid, it wrote no log row)."""
    ep = tenancy.agent_a
    relayed()
    with relay.stopped(), connect() as relay_conn, connect(autocommit=False) as held:
        held.execute("SELECT txid_current()")
        held.execute("SELECT count(*) FROM change_log")  # a reader's lock on the log, too
        watch, clock = relay_module.FloorWatch(), Clock()
        highs = []
        for i in range(4):
            execute(agent_store.create(ep, queue="default", title=f"t{i}"))
            highs.append(watched_pass(relay_conn, watch, clock).high)
        floor = watch.floor
        held.rollback()
    assert floor > highs[1], (floor, highs)


def test_with_a_floor_a_pass_walks_only_the_rows_after_it(relay, tenancy):
    """Under a held snapshot the relayed rows stay behind as dead versions (heap and index); a
    pass from the floor reads a few pages, one from the lowest id reads them all."""
    ep = tenancy.agent_a
    relayed()
    with relay.stopped(), connect() as relay_conn, connect(autocommit=False) as held:
        held.execute("SELECT txid_current()")
        watch, clock = relay_module.FloorWatch(), Clock()
        highs = []
        for _ in range(20):  # 20 × 400 changes to an endpoint (no todo: nothing else to count)
            relay_conn.execute(
                """INSERT INTO change_log (team_id, endpoint_id, op)
                   SELECT %s, %s, 'endpoint' FROM generate_series(1, 400)""",
                (tenancy.team_a.id, ep.endpoint_id),
            )
            highs.append(watched_pass(relay_conn, watch, clock).high)
        execute(agent_store.create(ep, queue="default", title="last"))

        def pages_read(floor: int) -> int:
            plan = relay_conn.execute(
                "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
                "SELECT id FROM change_log WHERE id >= %s ORDER BY id LIMIT 500",
                (floor,),
            ).fetchone()["QUERY PLAN"][0]["Plan"]
            return plan["Shared Hit Blocks"] + plan.get("Shared Read Blocks", 0)

        relay_conn.execute("SET enable_seqscan = off")  # as each pass plans it (relay.PASS_SETUP_SQL)
        from_floor, from_zero = pages_read(watch.floor), pages_read(0)
        held.rollback()
    assert watch.floor > highs[-4], (watch.floor, highs)  # it trails the passes by about two
    assert from_floor * 4 < from_zero, (from_floor, from_zero)


ENDPOINT_CHANGES = (
    "INSERT INTO change_log (team_id, endpoint_id, op) SELECT %s, %s, 'endpoint' FROM generate_series(1, %s)"
)


def test_a_truncated_log_sends_the_floor_back_to_zero(relay, tenancy):
    """TRUNCATE … RESTART IDENTITY (the test suite's reset, a restore) starts the ids again: rows
    below the old floor are still relayed, even when more of them than the floor were written
    before the watch looked."""
    relayed()
    with relay.stopped(), connect() as relay_conn:
        watch, clock = relay_module.FloorWatch(), Clock()
        for _ in range(4):
            relay_conn.execute(ENDPOINT_CHANGES, (tenancy.team_a.id, tenancy.agent_a.endpoint_id, 20))
            watched_pass(relay_conn, watch, clock)
        floor = watch.floor
        relay_conn.execute("TRUNCATE change_log RESTART IDENTITY")
        relay_conn.execute(ENDPOINT_CHANGES, (tenancy.team_a.id, tenancy.agent_a.endpoint_id, 200))
        taken = sum(watched_pass(relay_conn, watch, clock).taken for _ in range(3))
        left = log_rows()
    assert floor > 20
    assert taken == 200 and left == []


def test_a_sequence_started_again_without_a_truncate_sends_the_floor_back_to_zero(relay, tenancy):
    """The same storage, the ids reset below the floor (``ALTER SEQUENCE … RESTART``, a restore):
    the next check finds the sequence behind the floor and the rows below it are relayed."""
    relayed()
    with relay.stopped(), connect() as relay_conn:
        watch, clock = relay_module.FloorWatch(), Clock()
        for _ in range(4):
            relay_conn.execute(ENDPOINT_CHANGES, (tenancy.team_a.id, tenancy.agent_a.endpoint_id, 20))
            watched_pass(relay_conn, watch, clock)
        floor = watch.floor
        relay_conn.execute("SELECT setval(pg_get_serial_sequence('change_log', 'id'), 1, false)")
        relay_conn.execute(ENDPOINT_CHANGES, (tenancy.team_a.id, tenancy.agent_a.endpoint_id, 5))
        taken = sum(watched_pass(relay_conn, watch, clock).taken for _ in range(3))
        left = log_rows()
    assert floor > 20
    assert taken == 5 and left == [] and watch.floor < floor

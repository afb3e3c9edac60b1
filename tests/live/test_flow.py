"""The charts' rollup (``todo_flow``, migration 0012): the relay keeps it from the change log, and
once relayed it equals a direct computation from ``todo_attempts`` — under concurrent workers,
takeovers, reaps and a relay crash — per team and queue, per minute and per hour."""

from __future__ import annotations

import math
import threading
import time

import pytest

from tests import factories
from tests.factories import relayed
from todos.core.db import connect, execute
from todos.core.selectors import flow as flow_reads
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store
from todos.live import relay as relay_module

pytestmark = pytest.mark.usefixtures("store_db")

# What the rollup must hold, from the attempts themselves (and the todos, for the wait).
DIRECT_SQL = """
SELECT e.team_id, t.queue,
       count(*) FILTER (WHERE a.outcome = 'completed') AS completed,
       count(*) FILTER (WHERE a.outcome = 'failed' OR (a.disposition = 'dead_lettered' AND a.outcome <> 'failed'))
         AS failed,
       count(*) FILTER (WHERE a.outcome IN ('reaped', 'lease_expired')) AS died,
       flow_histogram(array_agg(flow_bucket(extract(epoch FROM a.claimed_at - t.created_at)::double precision))
                      FILTER (WHERE a.seq = 1)) AS waited,
       flow_histogram(array_agg(flow_bucket(extract(epoch FROM a.ended_at - a.claimed_at)::double precision))
                      FILTER (WHERE a.ended_at IS NOT NULL)) AS ran
FROM todo_attempts a JOIN todos t ON t.id = a.todo_id JOIN endpoints e ON e.id = t.endpoint_id
GROUP BY 1, 2"""

ROLLUP_SQL = """
SELECT team_id, queue, sum(completed) AS completed, sum(failed) AS failed, sum(died) AS died,
       (SELECT array_agg(s ORDER BY i) FROM (
            SELECT i, sum(w)::integer AS s FROM todo_flow x, unnest(x.waited) WITH ORDINALITY u(w, i)
            WHERE x.team_id = f.team_id AND x.queue = f.queue AND x.grain = %(grain)s GROUP BY i) h) AS waited,
       (SELECT array_agg(s ORDER BY i) FROM (
            SELECT i, sum(r)::integer AS s FROM todo_flow x, unnest(x.ran) WITH ORDINALITY u(r, i)
            WHERE x.team_id = f.team_id AND x.queue = f.queue AND x.grain = %(grain)s GROUP BY i) h) AS ran
FROM todo_flow f WHERE grain = %(grain)s
GROUP BY 1, 2"""


def direct() -> dict:
    with connect() as conn:
        rows = conn.execute(DIRECT_SQL).fetchall()
    out: dict = {}
    for r in rows:
        for queue in (r["queue"], ""):
            key = (r["team_id"], queue)
            have = out.setdefault(key, {"completed": 0, "failed": 0, "died": 0, "waited": [0] * 50, "ran": [0] * 50})
            for name in ("completed", "failed", "died"):
                have[name] += r[name]
            for name in ("waited", "ran"):
                have[name] = [a + b for a, b in zip(have[name], r[name])]
    # a queue with no finished attempt and no first claim has no row in the rollup
    return {
        k: v for k, v in out.items() if v["completed"] or v["failed"] or v["died"] or any(v["waited"]) or any(v["ran"])
    }


def rollup(grain: str) -> dict:
    relayed()
    with connect() as conn:
        rows = conn.execute(ROLLUP_SQL, {"grain": grain}).fetchall()
    return {
        (r["team_id"], r["queue"]): {
            "completed": r["completed"],
            "failed": r["failed"],
            "died": r["died"],
            "waited": list(r["waited"]),
            "ran": list(r["ran"]),
        }
        for r in rows
    }


def assert_rollup_is_direct() -> None:
    with connect() as conn:  # the direct computation needs every attempt still there
        assert conn.execute("SELECT coalesce(sum(attempts_pruned), 0) AS n FROM todos").fetchone()["n"] == 0
    expected = direct()
    assert expected, "the workload finished nothing"
    assert rollup("minute") == expected
    assert rollup("hour") == expected


def lapse(todo_id: str) -> None:
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo_id,))


# --- the buckets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [0.0, 0.004, 0.01, 0.0147, 0.5, 1.0, 1.4678, 59.9, 3600.0, 86400 * 30.0])
def test_the_board_and_the_database_put_a_duration_in_the_same_bucket(seconds):
    with connect() as conn:
        assert conn.execute("SELECT flow_bucket(%s) AS b", (seconds,)).fetchone()["b"] == flow_reads.bucket_of(seconds)


def test_percentiles_from_the_histogram_are_within_a_bucket_of_the_exact_value():
    values = [0.05 * 1.07**i for i in range(200)]
    histogram = [0] * 50
    for v in values:
        histogram[flow_reads.bucket_of(v) - 1] += 1
    for p in (0.5, 0.95):
        exact = sorted(values)[math.ceil(p * len(values)) - 1]
        estimate = flow_reads.percentile(histogram, p)
        assert estimate is not None and abs(math.log10(estimate / exact)) <= 1 / 6, (p, exact, estimate)
    assert flow_reads.percentile([0] * 50, 0.5) is None


@pytest.mark.parametrize(
    "buckets",
    [None, [], [1], [50, 50, 1], [0, 51, -3, None, 7], [(i * 7) % 50 + 1 for i in range(300)]],
    ids=["null", "empty", "one", "edges", "out-of-range-and-null", "many"],
)
def test_the_histogram_counts_each_bucket_and_ignores_what_is_not_one(buckets):
    expected = [0] * 50
    for b in buckets or ():
        if b is not None and 1 <= b <= 50:
            expected[b - 1] += 1
    with connect() as conn:
        got = conn.execute("SELECT flow_histogram(%s::integer[]) AS h", (buckets,)).fetchone()["h"]
    assert got == expected


def test_two_histograms_add_bucket_by_bucket():
    a = [i % 5 for i in range(50)]
    b = [(i * 3) % 11 for i in range(50)]
    with connect() as conn:
        row = conn.execute(
            "SELECT flow_add(%(a)s::integer[], %(b)s::integer[]) AS s, flow_add(NULL, %(b)s::integer[]) AS from_null",
            {"a": a, "b": b},
        ).fetchone()
    assert row["s"] == [x + y for x, y in zip(a, b, strict=True)]
    assert row["from_null"] == b


# --- the rollup -----------------------------------------------------------------------------------


def test_every_way_an_attempt_ends_lands_in_the_rollup_as_the_attempts_say():
    team = factories.team()
    ep = factories.endpoint(team, queues=("default", "email"))
    agent, other = factories.agent(ep), factories.agent(ep, session="other")
    human = factories.member(team, factories.user(), "operator")
    ids = [
        execute(agent_store.create(agent, queue=("default", "email")[i % 2], title=f"t{i}", max_attempts=2)).todo.id
        for i in range(8)
    ]
    execute(agent_store.claim(agent, ids[0]))
    execute(agent_store.complete(agent, ids[0]))
    execute(agent_store.claim(agent, ids[1]))
    execute(agent_store.fail(agent, ids[1]))  # a failed attempt, retry scheduled
    execute(agent_store.claim(agent, ids[2]))
    execute(agent_store.release(agent, ids[2]))  # ran, neither failed nor died
    execute(agent_store.claim(agent, ids[3]))
    lapse(ids[3])
    execute(background_store.reap())  # died, requeued
    execute(agent_store.claim(agent, ids[4]))
    lapse(ids[4])
    execute(agent_store.claim(other, ids[4]))  # died: taken over
    execute(agent_store.complete(other, ids[4]))
    execute(human_store.claim(human, ids[5]))
    execute(human_store.fail(human, ids[5]))
    execute(agent_store.claim(agent, ids[6]))
    execute(human_store.force_release(human, ids[6]))
    execute(agent_store.claim(agent, ids[7]))
    execute(human_store.cancel(human, ids[7]))
    execute(agent_store.heartbeat(agent, execute(agent_store.claim(agent, ids[2])).todo.id))  # a heartbeat ends nothing
    assert_rollup_is_direct()
    totals = rollup("minute")[(team.id, "")]
    assert (totals["completed"], totals["failed"], totals["died"]) == (2, 2, 2)
    assert sum(totals["waited"]) == 8  # eight first claims
    assert sum(totals["ran"]) == 9  # nine attempts ended (the last claim is still open)


def test_a_dead_letter_counts_as_failed_once_and_a_reap_into_one_also_as_died():
    team = factories.team()
    agent = factories.agent(factories.endpoint(team))
    failed = execute(agent_store.create(agent, queue="default", title="fails", max_attempts=1)).todo.id
    execute(agent_store.claim(agent, failed))
    execute(agent_store.fail(agent, failed))  # dead letter by a failed attempt: failed once
    reaped = execute(agent_store.create(agent, queue="default", title="lapses", max_attempts=1)).todo.id
    execute(agent_store.claim(agent, reaped))
    lapse(reaped)
    execute(background_store.reap())  # dead letter by a lapse: died and failed
    assert_rollup_is_direct()
    totals = rollup("hour")[(team.id, "default")]
    assert (totals["completed"], totals["failed"], totals["died"]) == (0, 2, 1)


def test_the_relay_keeps_the_rollup_exact_under_concurrent_workers_and_a_relay_crash():
    team, other_team = factories.team(), factories.team()
    eps = [factories.endpoint(team, queues=("default", "email")), factories.endpoint(other_team, queues=("default",))]
    agents = [factories.agent(eps[0]), factories.agent(eps[0], session="s2"), factories.agent(eps[1])]
    for agent in agents:
        for i in range(40):
            execute(agent_store.create(agent, queue=agent.queues[i % len(agent.queues)], title=f"t{i}", max_attempts=2))
    errors: list[BaseException] = []

    def worker(agent, n):
        try:
            while True:
                claim = execute(agent_store.claim_next(agent))
                if claim is None:
                    return
                todo_id = claim.todo.id
                execute(agent_store.heartbeat(agent, todo_id))
                # a todo's later attempts complete: no loop of releases, no attempt pruned
                choice = hash((todo_id, n)) % 5 if claim.todo.attempts_total <= 3 else 4
                if choice == 0:
                    execute(agent_store.fail(agent, todo_id))
                elif choice == 1:
                    execute(agent_store.release(agent, todo_id))
                elif choice == 2:
                    lapse(todo_id)  # left to lapse: a reap or another worker's takeover ends it
                else:
                    execute(agent_store.complete(agent, todo_id))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(agents[n % 3], n)) for n in range(6)]
    for th in threads:
        th.start()
    time.sleep(0.2)
    with connect() as conn:  # the relay's backend dies mid-run; it comes back by itself
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'board-relay'")
    reaper = threading.Thread(target=lambda: [execute(background_store.reap()) or time.sleep(0.01) for _ in range(30)])
    reaper.start()
    for th in threads:
        th.join(60)
    reaper.join(60)
    execute(background_store.reap())
    assert not errors, errors
    assert_rollup_is_direct()
    have = rollup("minute")
    assert (team.id, "email") in have and (other_team.id, "") in have
    assert have[(team.id, "")]["died"] > 0


def test_a_rebuild_keeps_what_the_log_held_for_the_charts():
    team = factories.team()
    agent = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo.id
    execute(agent_store.claim(agent, todo))
    execute(agent_store.complete(agent, todo))
    with connect() as conn:
        relay_module.rebuild_counts(conn)
    assert_rollup_is_direct()


def test_retention_keeps_a_day_of_minutes_and_eight_days_of_hours():
    team = factories.team()
    agent = factories.agent(factories.endpoint(team))
    todo = execute(agent_store.create(agent, queue="default", title="t")).todo.id
    execute(agent_store.claim(agent, todo))
    execute(agent_store.complete(agent, todo))
    relayed()
    with connect() as conn:
        conn.execute(
            """INSERT INTO todo_flow (team_id, grain, queue, at, completed, waited, ran)
               SELECT %(team)s, g, '', now() - o, 1, array_fill(0, ARRAY[50]), array_fill(0, ARRAY[50])
               FROM (VALUES ('minute', interval '2 days'), ('hour', interval '2 days'),
                            ('hour', interval '9 days')) v(g, o)""",
            {"team": team.id},
        )
        conn.execute(relay_module.FLOW_RETENTION_SQL)
        kept = conn.execute(
            "SELECT grain, count(*) AS n FROM todo_flow WHERE team_id = %s GROUP BY grain ORDER BY grain", (team.id,)
        ).fetchall()
    # the recent minute and hour (two rows each: the queue and every queue) and the 2-day hour
    assert [(r["grain"], r["n"]) for r in kept] == [("hour", 3), ("minute", 2)]

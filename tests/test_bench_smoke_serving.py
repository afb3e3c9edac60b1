"""Smoke runs of the over-the-wire and at-scale benchmarks (``bench/http_drain.py``,
``bench/watching.py``, ``bench/board_scale.py``, ``bench/longpoll_pickup.py``,
``bench/live_latency.py``): tiny sizes against
the test database, so their harness (servers, workers, clients, loading, verification in SQL)
cannot rot between the full runs reported in ``bench/README.md``. They check that each
benchmark runs and verifies, not how fast anything is.
"""

from __future__ import annotations

import pytest

from bench import http_drain
from bench.common import connect
from bench.serving import clear_todos, start_board, vend_agent
from todos.core import db

pytestmark = [pytest.mark.usefixtures("store_db"), pytest.mark.slow]


@pytest.fixture
def agent():
    with connect(db.conninfo()) as conn:
        scope, token, team_id = vend_agent(conn, (http_drain.QUEUE,))
    return scope, token, team_id


def test_http_drain_row_and_batch_verify(agent):
    scope, token, _ = agent
    conninfo = db.conninfo()
    with start_board(conninfo) as server:
        row = http_drain.drain_http_in(conninfo, server, scope, token, 30, 2)
        clear_todos(conninfo)
        batched = http_drain.drain_http_in(conninfo, server, scope, token, 45, 3, batch=10, label="http-batch")
        clear_todos(conninfo)
    assert row.requests >= 2 * 30 and row.board_cpu is not None and row.seconds > 0
    assert batched.requests >= 2 * 5


def test_http_drain_anatomy_times_every_part(agent):
    scope, token, _ = agent
    conninfo = db.conninfo()
    with start_board(conninfo) as server:
        parts = http_drain.anatomy(conninfo, scope, token, {"board": server}, 2)
    names = parts.parts()
    assert http_drain.AUTH in names and http_drain.STATEMENT in names
    assert any("in-process (Board as is" in p for p in names) and any("over HTTP" in p for p in names)


def test_profile_layers_sorts_collapsed_stacks(tmp_path):
    raw = tmp_path / "profile.txt"
    raw.write_text(
        "_run (asyncio/events.py:80);execute (psycopg/cursor_async.py:100) 3\n"
        "_worker (concurrent/futures/thread.py:81);__call__ (asgiref/sync.py:500) 1\n"
    )
    layers, leaves, total = http_drain.profile_layers(str(raw))
    assert total == 4 and dict(layers)["psycopg: send the statement, read and decode rows"] == 3


def test_watching_drain_with_dashboards_verifies():
    from bench import watching

    runs = watching.run_watching_in(db.conninfo(), 60, 2, 2, ["none", "sockets", "rows"], 1, log=lambda line: None)
    by_mode = {r.mode: r for r in runs}
    assert set(by_mode) == {"none", "sockets", "rows"}
    assert by_mode["sockets"].stats["messages"] > 0  # the dashboards heard the drain
    assert by_mode["rows"].stats["fetches"] > 0 and by_mode["rows"].stats["errors"] == 0


def test_board_scale_loads_and_renders_every_page():
    from bench import board_scale

    result = board_scale.run_scale_in(
        db.conninfo(), 2_000, runs=1, reload=True, drop_indexes=False, log=lambda line: None
    )
    pages = result["pages"]
    assert len(pages[board_scale.ME]) >= 18 and len(result["group_by"]) == 1
    assert all(len(v) == 1 for v in result["times"].values())


def test_longpoll_pickup_measures_both_create_paths(agent):
    from bench import longpoll_pickup

    conninfo = db.conninfo()
    with connect(conninfo) as conn:
        scope, token, _ = vend_agent(conn, (longpoll_pickup.QUEUE,))
    with start_board(conninfo) as server:
        r = longpoll_pickup.measure(server.url, token, scope, conninfo, 3, 2)
    assert len(r["latency"]["http"]) == 3 and len(r["latency"]["store"]) == 3
    assert all(v < 35_000 for v in r["from_send"]["http"])


def test_live_latency_reaches_every_client_and_measures_each_transition():
    import argparse

    from bench import live_latency

    args = argparse.Namespace(
        clients=4, rate=40.0, seconds=1.5, teams=2, servers=2, coalesce=0.07, profile_server=None, verbose=False
    )
    r = live_latency.measure_in(db.conninfo(), args)
    assert r["lost"] == 0  # every transition reached every client of its team
    assert r["samples"] == r["transitions"] * 2  # two clients per team
    assert 0 <= r["first_p50"] <= r["p50"] <= r["p99"] <= r["max"]
    assert r["messages_per_client_per_s"] > 0

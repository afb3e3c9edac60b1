"""Smoke runs of the over-the-wire and at-scale benchmarks (``bench/http_drain.py``,
``bench/watching.py``, ``bench/board_scale.py``, ``bench/longpoll_pickup.py``,
``bench/live_latency.py``, ``bench/agent_load.py``): tiny sizes against
the test database, so their harness (servers, workers, clients, loading, verification in SQL)
cannot rot between the full runs reported in ``bench/README.md``. They check that each
benchmark runs and verifies, not how fast anything is.
"""

from __future__ import annotations

import pytest

from bench import http_drain
from bench.common import connect
from bench.serving import clear_todos, start_board, vend_agent
from bench.systems import procrastinate_available
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


def test_http_drain_through_the_client_verifies(agent):
    """The Python client's worker (one request per job) and its batch pair drain and verify."""
    scope, token, _ = agent
    conninfo = db.conninfo()
    with start_board(conninfo) as server:
        row = http_drain.drain_http_in(conninfo, server, scope, token, 30, 3, label="client")
        clear_todos(conninfo)
        batched = http_drain.drain_http_in(conninfo, server, scope, token, 40, 2, batch=10, label="client-batch")
        clear_todos(conninfo)
    assert row.n == 30 and row.client_cpu is not None and row.client_cpu > 0 and row.seconds > 0
    assert batched.n == 40 and batched.board_cpu is not None


def test_enqueue_compares_batch_and_one_by_one(agent, capsys):
    from bench import enqueue

    conninfo = db.conninfo()
    _, token, _ = agent
    with start_board(conninfo) as server:
        one = enqueue.run_once(conninfo, server, token, "create_for", 20, 10, "smoke-a")
        clear_todos(conninfo)
        batched = enqueue.run_once(conninfo, server, token, "create_batch", 40, 10, "smoke-b")
        clear_todos(conninfo)
    assert one["rate"] > 0 and batched["rate"] > 0 and batched["board_cpu"] >= 0


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
    # the loader writes each attempt's search document as the store does: the search pages find
    # what the loaded attempts said, and an attempt that said nothing has none
    with connect(db.conninfo()) as conn:
        docs = conn.execute(
            """SELECT count(*) FILTER (WHERE error IS NOT NULL OR summary IS NOT NULL) AS said,
                      count(*) FILTER (WHERE search_doc IS NOT NULL) AS documents,
                      count(*) FILTER (WHERE search_doc @@ phraseto_tsquery('simple', 'tests failed')) AS phrase,
                      count(*) FILTER (WHERE search_doc @@ phraseto_tsquery('simple', 'RecursionError')) AS long
               FROM todo_attempts"""
        ).fetchone()
    assert docs is not None
    assert docs["said"] > 0 and docs["documents"] == docs["said"] and docs["phrase"] > 0 and docs["long"] > 0


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


def _agent_load_table(out: str) -> tuple[list[str], list[dict[str, str]]]:
    """The agent-load table's header and its rows (cells by column name), as printed."""
    from bench import agent_load

    lines = [line for line in out.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == list(agent_load.COLUMNS)
    rows = [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))) for line in lines[1:]]
    return header, rows


def test_agent_load_steps_board_open_loop(capsys):
    from bench import agent_load

    opts = agent_load.parse_options(["--smoke"])
    run = agent_load.run_board_in(db.conninfo(), opts, log=lambda line: None)
    clear_todos(db.conninfo())
    agent_load.print_report([run], opts)
    out = capsys.readouterr().out
    _, rows = _agent_load_table(out)
    assert [(r["system"], r["offered rate"], r["fault"]) for r in rows] == [
        ("board", "20", "none"),
        ("board", "40", "none"),
    ]
    for row, step in zip(rows, run.steps):
        assert float(row["completed/s"]) > 0 and step.completed > 0  # jobs went all the way through
        assert float(row["offered/s"]) > 0 and float(row["accepted/s"]) > 0
        assert step.requests is not None and step.requests >= 2 * step.completed  # a claim and a complete each
        assert step.dead_made > 0  # every claim and complete leaves a dead row version of the todo
    assert sum(1 for line in out.splitlines() if line.startswith("board at ")) == 2  # a verdict per step
    assert any(line.startswith("board: ") and "saturat" in line for line in out.splitlines())


def test_agent_load_runs_beside_the_faults(capsys):
    from bench import agent_load

    opts = agent_load.parse_options(["--smoke", "--held-transaction", "--readers", "2", "--terminate"])
    run = agent_load.run_board_in(db.conninfo(), opts, log=lambda line: None)
    clear_todos(db.conninfo())
    agent_load.print_report([run], opts)
    _, rows = _agent_load_table(capsys.readouterr().out)
    faults = [r["fault"] for r in rows]
    assert faults[0].startswith("held transaction, 2 readers, terminate: ")
    assert faults[1].startswith("after the held transaction, 2 readers, terminate: ")
    assert run.killed > 0 and run.scans > 0 and not run.notes
    assert sum(step.completed for step in run.steps) > 0  # the agent path kept completing work


@pytest.mark.skipif(procrastinate_available() is not None, reason=str(procrastinate_available()))
def test_agent_load_runs_procrastinate_the_same_way(capsys):
    from bench import agent_load
    from bench.common import fresh_database

    opts = agent_load.parse_options(["--smoke"])
    with fresh_database(db.conninfo(), "smoke_agent_load_peer") as conninfo:
        run = agent_load.run_peer_in(conninfo, opts, log=lambda line: None)
    agent_load.print_report([run], opts)
    _, rows = _agent_load_table(capsys.readouterr().out)
    assert [r["system"] for r in rows] == ["procrastinate", "procrastinate"]
    for row, step in zip(rows, run.steps):
        assert float(row["completed/s"]) > 0 and step.completed > 0
        assert row["requests/job"] == "—" and step.dead_made > 0

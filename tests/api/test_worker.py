"""The worker (``board_client.Worker`` with the command handler, ``manage.py work``) end to end against the
live server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from board_client import Worker
from board_client.command import Tail, command_handler

from tests.support.live_server import ROOT, server_environment, start_server, stop_server
from todos.core import db
from todos.core.db import execute
from todos.core.selectors.agent_api import get_todo
from todos.core.store import agent as agent_store
from todos.core.store import background


def run_worker(
    url: str,
    token: str,
    command: list[str],
    *,
    todos: int,
    lease: int = 30,
    fence: bool = True,
    concurrency: int = 1,
    limit: float = 60,
    capabilities: tuple[str, ...] = (),
) -> Worker:
    worker = Worker(
        url,
        token,
        lease=lease,
        fence=fence,
        concurrency=concurrency,
        wait_seconds=1,
        claimant="test-worker",
        capabilities=capabilities,
    )
    worker.add_handler("default", command_handler(command))
    guard = threading.Timer(limit, worker.stop)
    guard.start()
    try:
        assert worker.run(max_todos=todos) == 0
    finally:
        guard.cancel()
    return worker


def detail(agent, todo_id):
    return execute(get_todo(agent, todo_id))


def wait_for(predicate, timeout: float = 20, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def todo_row(todo_id: str) -> dict:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM todos WHERE id = %s", (todo_id,)).fetchone()


def test_a_succeeding_command_completes_each_todo_with_its_stdout(asgi_server, tenancy):
    payloads = [{"n": n, "text": "héllo"} for n in range(3)]
    ids = [
        execute(agent_store.create(tenancy.agent, queue="default", title=f"t{n}", payload=p)).todo.id
        for n, p in enumerate(payloads)
    ]
    worker = run_worker(asgi_server.url, tenancy.worker_token, ["cat"], todos=3, concurrency=2)
    assert sorted(o.todo_id for o in worker.outcomes) == sorted(ids)
    for todo_id, payload in zip(ids, payloads):
        got = detail(tenancy.agent, todo_id)
        assert got.todo.state == "done" and got.todo.result == {"exit_code": 0}
        (attempt,) = got.attempts
        assert json.loads(attempt.summary) == payload
        assert (attempt.outcome, attempt.claimant) == ("completed", "test-worker")


def test_a_failing_command_fails_the_todo_with_its_stderr(asgi_server, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="doomed", max_attempts=1)).todo
    run_worker(asgi_server.url, tenancy.worker_token, ["sh", "-c", "echo bad >&2; exit 3"], todos=1)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "failed" and got.todo.dead_letter and got.todo.result == {"exit_code": 3}
    assert "bad" in got.attempts[0].summary and got.attempts[0].outcome == "failed"


def test_the_command_gets_the_todo_in_its_environment_but_not_the_token(asgi_server, tenancy, monkeypatch):
    monkeypatch.setenv("BOARD_TOKEN", tenancy.worker_token)
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="env check", kind="k")).todo
    script = (
        'printf "%s|%s|%s|%s|%s|%s" "$BOARD_TODO_ID" "$BOARD_TODO_QUEUE" "$BOARD_TODO_ATTEMPT" '
        '"$BOARD_TODO_TITLE" "$BOARD_TODO_KIND" "${BOARD_TOKEN:-none}"'
    )
    run_worker(asgi_server.url, tenancy.worker_token, ["sh", "-c", script], todos=1, fence=False)
    assert detail(tenancy.agent, todo.id).attempts[0].summary == f"{todo.id}|default|1|env check|k|none"


def test_long_output_is_cut_to_its_last_2048_bytes(asgi_server, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="chatty")).todo
    run_worker(asgi_server.url, tenancy.worker_token, ["sh", "-c", "yes é | head -c 100000; printf END"], todos=1)
    summary = detail(tenancy.agent, todo.id).attempts[0].summary
    assert summary.endswith("END") and len(summary.encode()) <= 2048


def test_heartbeats_keep_a_short_lease_alive(asgi_server, tenancy):
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="slow")).todo
    run_worker(asgi_server.url, tenancy.worker_token, ["sh", "-c", "sleep 2.5; echo done"], todos=1, lease=1)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "done"  # a 1 s lease outlived by 2.5 s of work: heartbeats held it
    assert got.attempts[0].last_heartbeat_at is not None and got.attempts[0].outcome == "completed"


def test_tail_keeps_the_end_and_never_splits_a_character():
    tail = Tail(keep=16)
    tail.feed("é".encode() * 20)
    assert tail.text(max_bytes=5) == "éé"
    tail.feed(b"abc")
    assert tail.text(max_bytes=4) == "abc"  # the half "é" before it is dropped, not mangled


# --- as a separate process: SIGKILL and SIGTERM -----------------------------------------------------


def start_work_process(url: str, token: str, script: str, *, lease: int) -> subprocess.Popen:
    env = server_environment(BOARD_URL=url, BOARD_TOKEN=token)
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "work",
            "--queue",
            "default",
            "--lease",
            str(lease),
            "--wait",
            "1",
            "--",
            "sh",
            "-c",
            script,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_killed_worker_s_todo_is_reaped_and_completed_by_the_next(asgi_server, tenancy, tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="survives", payload={"v": 1})).todo
    script = f'if [ "$BOARD_TODO_ATTEMPT" = 1 ]; then echo $$ > {pidfile}; exec sleep 60; fi; cat'
    process = start_work_process(asgi_server.url, tenancy.worker_token, script, lease=2)
    child = None
    try:
        wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the command to start")
        child = int(pidfile.read_text())
        assert todo_row(todo.id)["state"] == "claimed"
        process.kill()  # SIGKILL: no release, no report
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        if child and alive(child):
            os.kill(child, signal.SIGKILL)
    reaped = wait_for(lambda: todo.id in execute(background.reap()).ids, timeout=10, what="the lease to lapse")
    assert reaped and todo_row(todo.id)["state"] == "pending"
    run_worker(asgi_server.url, tenancy.worker_token, ["sh", "-c", script], todos=1)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "done"
    assert [(a.seq, a.outcome, a.died) for a in got.attempts] == [(2, "completed", False), (1, "reaped", True)]
    assert json.loads(got.attempts[0].summary) == {"v": 1}


@pytest.mark.slow
def test_sigterm_terminates_the_command_releases_the_lease_and_exits_0(asgi_server, tenancy, tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="interrupted")).todo
    process = start_work_process(asgi_server.url, tenancy.worker_token, f"echo $$ > {pidfile}; exec sleep 60", lease=30)
    try:
        wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the command to start")
        child = int(pidfile.read_text())
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output.decode(errors="replace")
    assert not alive(child)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "pending" and got.todo.owner is None
    assert got.attempts[0].outcome == "released" and "signal" in got.attempts[0].summary


def test_a_worker_takes_only_what_its_capabilities_cover(asgi_server, tenancy):
    gpu = execute(agent_store.create(tenancy.agent, queue="default", title="gpu", requires=["gpu"])).todo
    arm = execute(agent_store.create(tenancy.agent, queue="default", title="arm", requires=["arm64"])).todo
    plain = execute(agent_store.create(tenancy.agent, queue="default", title="plain")).todo
    worker = run_worker(asgi_server.url, tenancy.worker_token, ["cat"], todos=2, capabilities=("gpu",))
    assert sorted(o.todo_id for o in worker.outcomes) == sorted([gpu.id, plain.id])
    assert todo_row(arm.id)["state"] == "pending"


def test_the_command_line_refuses_a_bad_capability(tenancy):
    env = {k: v for k, v in server_environment().items() if k not in ("BOARD_URL", "BOARD_TOKEN")}
    result = subprocess.run(
        [sys.executable, "manage.py", "work", "--url", "http://x", "--token", "t", "--queue", "q"]
        + ["--capability", "gpu", "--capability", "x" * 65, "--", "cat"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "--capability[1]: must be at most 64 characters" in result.stderr


def test_a_refused_token_stops_the_worker_with_an_error(asgi_server, tenancy):
    worker = Worker(asgi_server.url, "bd_wrong", wait_seconds=1)
    worker.add_handler("default", command_handler(["cat"]))
    assert worker.run() == 1
    assert worker.fatal is not None and worker.fatal.code == "unauthorized"


def test_the_command_line_reports_missing_options(tenancy):
    env = {k: v for k, v in server_environment().items() if k not in ("BOARD_URL", "BOARD_TOKEN")}
    result = subprocess.run(
        [sys.executable, "manage.py", "work", "--queue", "q", "--", "cat"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "--url" in result.stderr
    result = subprocess.run(
        [sys.executable, "manage.py", "work", "--url", "http://x", "--token", "t", "--queue", "q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "command" in result.stderr


@pytest.mark.slow
def test_the_worker_rides_out_a_server_restart(store_db, tenancy):
    """Heartbeats fail while the server is down and resume when it is back; the report lands."""
    server = start_server()
    port = int(server.url.rsplit(":", 1)[1])
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="through a restart")).todo
    result: dict = {}

    def work():
        result["worker"] = run_worker(
            server.url, tenancy.worker_token, ["sh", "-c", "sleep 6; echo survived"], todos=1, lease=3
        )

    thread = threading.Thread(target=work)
    thread.start()
    try:
        wait_for(lambda: todo_row(todo.id)["state"] == "claimed", what="the claim")
        stop_server(server)
        time.sleep(1.5)
        server = start_server(port=port)
        thread.join(40)
    finally:
        stop_server(server)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "done" and got.attempts[0].summary.strip() == "survived"
    assert [o.verdict for o in result["worker"].outcomes] == ["completed"]


def test_a_lost_lease_stops_the_command_and_drops_the_todo(asgi_server, tenancy, tmp_path: Path):
    """Another holder took the lapsed lease over: the fenced heartbeat is refused, the command is
    terminated, and the worker reports nothing (the todo is the new holder's now)."""
    pidfile = tmp_path / "child.pid"
    todo = execute(agent_store.create(tenancy.agent, queue="default", title="contested")).todo
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.update(
            worker=run_worker(
                asgi_server.url,
                tenancy.worker_token,
                ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"],
                todos=1,
                lease=3,
            )
        )
    )
    thread.start()
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the command to start")
    child = int(pidfile.read_text())
    with db.connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo.id,))
    taken = execute(agent_store.claim(tenancy.agent, todo.id, claimant="usurper"))
    thread.join(30)
    assert [(o.todo_id, o.verdict) for o in result["worker"].outcomes] == [(todo.id, "lost")]
    assert not alive(child)
    got = detail(tenancy.agent, todo.id)
    assert got.todo.state == "claimed" and got.todo.attempts_total == taken.attempt_seq == 2
    assert [(a.seq, a.outcome, a.claimant) for a in got.attempts] == [
        (2, None, "usurper"),
        (1, "lease_expired", "test-worker"),
    ]
    execute(agent_store.release(tenancy.agent, todo.id))  # leave no lease behind

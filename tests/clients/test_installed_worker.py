"""The client as an agent on another machine gets it: the wheel built from clients/python,
installed into a fresh virtual environment that has nothing of Board, whose ``board-worker``
drains a real Board. And ``board-worker``'s refusals of bad options."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import factories
from tests.support.live_server import ROOT
from todos.core.db import execute
from todos.core.selectors.agent_api import get_todo
from todos.core.store import agent as agent_store

CLIENT = ROOT / "clients" / "python"


def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    assert found, "uv is needed to build and install the client (the README's test command runs under uv)"
    return found


def bare_environment(**extra: str) -> dict[str, str]:
    """No PYTHONPATH or virtual environment of the test run leaks into the installed worker."""
    return {"PATH": os.environ["PATH"], **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the client's wheel (and httpx) in it; the path of its ``bin``."""
    where = tmp_path_factory.mktemp("client-install")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    subprocess.run(
        [uv(), "build", "--wheel", "--out-dir", str(where / "dist"), str(CLIENT)],
        check=True, capture_output=True, env=env, timeout=300,
    )  # fmt: skip
    (wheel,) = (where / "dist").glob("board_client-*.whl")
    subprocess.run(
        [uv(), "venv", "--python", sys.executable, str(where / "venv")], check=True, capture_output=True, env=env
    )
    python = where / "venv" / "bin" / "python"
    subprocess.run(
        [uv(), "pip", "install", "--python", str(python), str(wheel)], check=True, capture_output=True, env=env,
        timeout=300,
    )  # fmt: skip
    return where / "venv" / "bin"


@pytest.mark.slow
def test_the_installed_wheel_has_nothing_of_board_and_its_board_worker_drains_a_real_board(
    installed, asgi_server, store_db, tmp_path
):
    python = installed / "python"
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u; print([m for m in ('django', 'todos', 'psycopg', 'board') "
            "if u.find_spec(m)]); import board_client; print(board_client.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=bare_environment(),
    )  # fmt: skip (not the checkout's directory, whose packages the current directory would offer)
    found, location = probe.stdout.splitlines()
    assert found == "[]" and str(installed.parent) in location, probe.stdout

    team = factories.team()
    vended = factories.endpoint(team, slug="installed", queues=("default",))
    agent = factories.agent(vended)
    ids = [
        execute(agent_store.create(agent, queue="default", title=f"job {n}", payload={"n": n})).todo.id
        for n in range(12)
    ]
    env = bare_environment(BOARD_URL=asgi_server.url, BOARD_TOKEN=vended.token, HOME=str(tmp_path))
    options = ["--queue", "default", "--concurrency", "3", "--wait", "1", "--max-todos", "12"]
    double = "import json, sys; print(json.load(sys.stdin)['n'] * 2)"
    worker = subprocess.Popen(
        [str(installed / "board-worker"), *options, "--", sys.executable, "-c", double],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        output, _ = worker.communicate(timeout=120)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, output
    for n, todo_id in enumerate(ids):
        got = execute(get_todo(agent, todo_id))
        assert got.todo.state == "done" and got.attempts[0].summary.strip() == str(n * 2), output


@pytest.mark.slow
def test_the_installed_board_worker_stops_on_sigterm_and_gives_the_lease_back(
    installed, asgi_server, store_db, tmp_path
):
    team = factories.team()
    vended = factories.endpoint(team, slug="installed-stop", queues=("default",))
    agent = factories.agent(vended)
    todo = execute(agent_store.create(agent, queue="default", title="long")).todo
    marker = tmp_path / "started"
    env = bare_environment(BOARD_URL=asgi_server.url, BOARD_TOKEN=vended.token)
    worker = subprocess.Popen(
        [str(installed / "board-worker"), "--queue", "default", "--wait", "1", "--", "sh", "-c",
         f"touch {marker}; exec sleep 60"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists()
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, output
    got = execute(get_todo(agent, todo.id))
    assert got.todo.state == "pending" and got.attempts[0].outcome == "released", output


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (["--queue", "q", "--", "cat"], "--url (or BOARD_URL) is required"),
        (["--url", "http://x", "--queue", "q", "--", "cat"], "--token (or BOARD_TOKEN) is required"),
        (["--url", "http://x", "--token", "t", "--queue", "q"], "give either a command after --"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--handler", "json:loads", "--", "cat"], "give either"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--handler", "nomodule"], "MODULE:FUNCTION"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--handler", "no_such_mod:f"], "cannot import"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--handler", "json:nothing"], "has no function"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--concurrency", "0", "--", "cat"], "--concurrency"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--lease", "0", "--", "cat"], "--lease"),
        (["--url", "http://x", "--token", "t", "--queue", "q", "--max-todos", "0", "--", "cat"], "--max-todos"),
    ],
)
def test_board_worker_names_the_bad_option(arguments, complaint):
    env = {k: v for k, v in os.environ.items() if k not in ("BOARD_URL", "BOARD_TOKEN")}
    result = subprocess.run(
        [sys.executable, "-m", "board_client.cli", *arguments], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 2 and complaint in result.stderr, result.stderr

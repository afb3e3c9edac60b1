"""``manage.py up`` in a subprocess, for the tests that run it as an operator would."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.live_server import server_environment

ROOT = Path(__file__).resolve().parent.parent.parent
UP_TIMEOUT = 120.0


def start_up(port: int, *args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "up", "--port", str(port), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def up_environment(**extra: str) -> dict:
    """The test run's environment for an ``up`` process (on the test database unless ``extra``
    names another ``DATABASE_URL``), without the variables each test sets for itself."""
    env = server_environment(**extra)
    for name in ("BOARD_ADMIN_USERNAME", "BOARD_ADMIN_PASSWORD", "BEHIND_HTTPS_PROXY", "BOARD_HOST", "BOARD_PORT"):
        if name not in extra:
            env.pop(name, None)
    return env


def wait_healthy(
    port: int, process: subprocess.Popen, timeout: float = UP_TIMEOUT, *, host: str = "127.0.0.1", every: float = 0.3
) -> httpx.Response:
    """Poll ``/healthz`` (``every`` seconds) until it answers 200; fail (with the process's output)
    if it exits first."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2) as client:  # one client: a new one per poll costs CPU the server wants
        while time.monotonic() < deadline:
            if process.poll() is not None:
                out, err = process.communicate()
                pytest.fail(f"up on {port} exited with {process.returncode}:\n{out}\n{err}")
            try:
                response = client.get(f"http://{host}:{port}/healthz")
                if response.status_code == 200:
                    return response
            except httpx.HTTPError:
                pass
            time.sleep(every)
    pytest.fail(f"up on {port} did not answer /healthz 200 within {timeout:.0f} s")


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[str, str]:
    """Stop ``process`` (SIGTERM unless told) and return its output; SIGKILL after 60 s."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        return process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate(timeout=10)

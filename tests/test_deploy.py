"""The deployment in docker-compose.yml, as far as it can be tried without a Docker engine.

- ``deploy/Caddyfile``, the balancer's configuration, runs in the Caddy binary from Debian's
  ``caddy`` package in front of two real Board processes (``manage.py up``, daphne) on 127.0.0.1.
  The test changes two things only: the ``dynamic a board 8000`` upstream lookup (Docker's DNS)
  becomes the two local processes, and Caddy binds 127.0.0.1. Then: HTTP round-robins across both,
  a websocket upgrades and carries Board's first message, a 5-second long poll is not cut, and a
  client's own X-Forwarded-For is not believed.
- ``docker-compose.yml`` is parsed and its service graph checked (no host port per replica, the
  balancer depends on healthy replicas, health checks present).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
import yaml
from django.conf import settings
from django.test import Client

from tests import factories
from tests.support.live_server import free_port
from tests.up.processes import start_up, stop, up_environment, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
CADDYFILE = ROOT / "deploy" / "Caddyfile"
COMPOSE = ROOT / "docker-compose.yml"
CADDY = shutil.which("caddy")
DYNAMIC_UPSTREAMS = re.compile(r"^(\s*)dynamic a board 8000 \{\n.*?^\1\}\n", re.M | re.S)

pytestmark = pytest.mark.slow


# --- docker-compose.yml's service graph --------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_services(compose):
    assert set(compose["services"]) == {"postgres", "board", "lb", "loops", "pgbouncer"}
    # PgBouncer is optional: only with its profile (docs/deployment.md).
    assert compose["services"]["pgbouncer"]["profiles"] == ["pgbouncer"]


def test_compose_pgbouncer_pools_transactions_in_front_of_postgres(compose):
    import configparser

    services = compose["services"]
    bouncer = services["pgbouncer"]
    assert (ROOT / bouncer["build"] / "Dockerfile").exists()
    ini = configparser.ConfigParser()
    ini.read(ROOT / bouncer["build"] / "pgbouncer.ini")
    assert ini["pgbouncer"]["pool_mode"] == "transaction"
    assert ini["pgbouncer"]["listen_port"] == "6432"
    assert "host=postgres port=5432" in ini["databases"]["board"]
    user = services["postgres"]["environment"]["POSTGRES_USER"]
    userlist = (ROOT / bouncer["build"] / "userlist.txt").read_text()
    assert userlist.startswith(f'"{user}" ')
    # The Board processes wait for it when the profile is on, and take both URLs from the shell.
    board = services["board"]
    assert board["depends_on"]["pgbouncer"] == {"condition": "service_healthy", "required": False}
    assert board["environment"]["DATABASE_URL"].startswith("${DATABASE_URL:-postgresql://")
    assert board["environment"]["BOARD_LISTEN_URL"] == "${BOARD_LISTEN_URL:-}"
    assert board["environment"]["BOARD_READ_REPLICA_URL"] == "${BOARD_READ_REPLICA_URL:-}"


def test_compose_board_replicas_publish_no_host_port(compose):
    board = compose["services"]["board"]
    assert "ports" not in board  # one published port per replica cannot scale
    assert "--no-loops" in board["command"] and "0.0.0.0" in board["command"]
    assert board["depends_on"]["postgres"]["condition"] == "service_healthy"
    # Reachable only through the balancer, which sets X-Forwarded-* itself (deploy/Caddyfile).
    assert board["environment"]["BEHIND_HTTPS_PROXY"] == "1"


def test_compose_balancer_fronts_healthy_replicas(compose):
    lb = compose["services"]["lb"]
    assert lb["image"].startswith("caddy:")
    assert lb["depends_on"]["board"]["condition"] == "service_healthy"
    assert [p.split(":")[-1] for p in lb["ports"]] == ["80"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in lb["volumes"] if v.startswith("./")}
    assert (ROOT / mounts["/etc/caddy/Caddyfile"]).resolve() == CADDYFILE


def test_compose_health_checks(compose):
    services = compose["services"]
    for name in ("postgres", "board", "lb"):
        assert services[name]["healthcheck"]["test"], name
    for name in ("board", "lb"):
        assert any("/healthz" in part for part in services[name]["healthcheck"]["test"]), name
    loops = services["loops"]
    assert loops["command"][-1] == "reaper"
    assert loops["depends_on"]["board"]["condition"] == "service_healthy"  # after the migrations


# --- deploy/Caddyfile in a real Caddy ----------------------------------------------------------


def caddyfile_for_test(upstreams: list[str]) -> str:
    """deploy/Caddyfile with the Docker DNS lookup replaced by ``upstreams``, bound to 127.0.0.1."""
    text = CADDYFILE.read_text()
    text, replaced = DYNAMIC_UPSTREAMS.subn(lambda m: f"{m.group(1)}to {' '.join(upstreams)}\n", text)
    assert replaced == 1, "deploy/Caddyfile no longer has the `dynamic a board 8000 { … }` block"
    text, bound = re.subn(r"^(\{\$BOARD_LB_ADDRESS::80\} \{\n)", r"\1\tbind 127.0.0.1\n", text, flags=re.M)
    assert bound == 1, "deploy/Caddyfile no longer has the `{$BOARD_LB_ADDRESS::80}` site"
    return text


@pytest.fixture(scope="module")
def balanced(django_db_setup, tmp_path_factory):
    """Caddy on deploy/Caddyfile in front of two ``manage.py up`` processes (the test database,
    ``BEHIND_HTTPS_PROXY=1`` as in docker-compose.yml, plus a test-only view that tells which
    process answered). Yields the balancer's base URL."""
    if CADDY is None:
        pytest.skip("caddy is not installed (apt-get install caddy; .ci/run does)")
    env = up_environment(
        DJANGO_SETTINGS_MODULE="tests.up.echo_settings",
        BEHIND_HTTPS_PROXY="1",
        BOARD_ADMIN_USERNAME="deploy-test-admin",
        BOARD_ADMIN_PASSWORD="a-long-test-password",
    )
    ports = [free_port(), free_port()]
    boards = [start_up(port, "--no-loops", env=env) for port in ports]
    caddy = None
    work = tmp_path_factory.mktemp("caddy")
    try:
        for port, process in zip(ports, boards):
            wait_healthy(port, process)
        config = work / "Caddyfile"
        config.write_text(caddyfile_for_test([f"127.0.0.1:{port}" for port in ports]))
        lb_port = free_port()
        caddy_env = {
            "PATH": os.environ["PATH"],
            "HOME": str(work),
            "XDG_DATA_HOME": str(work / "data"),
            "XDG_CONFIG_HOME": str(work / "config"),
            "BOARD_LB_ADDRESS": f":{lb_port}",
        }
        log = open(work / "caddy.log", "wb")
        caddy = subprocess.Popen(
            [CADDY, "run", "--config", str(config), "--adapter", "caddyfile"],
            env=caddy_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            assert caddy.poll() is None, (work / "caddy.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{lb_port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, (work / "caddy.log").read_text()
            time.sleep(0.2)
        yield f"http://127.0.0.1:{lb_port}"
    finally:
        if caddy is not None:
            caddy.terminate()
            caddy.wait(timeout=10)
        for process in boards:
            stop(process)


def test_caddy_round_robins_http_across_both_processes(balanced):
    pids = [httpx.get(f"{balanced}/test-echo-request/", timeout=10).json()["pid"] for _ in range(10)]
    counts = Counter(pids)
    assert len(counts) == 2 and set(counts.values()) == {5}, pids
    assert all(a != b for a, b in zip(pids, pids[1:])), pids  # strictly alternating


def test_caddy_sets_forwarded_headers_itself(balanced):
    """The replicas trust X-Forwarded-* (BEHIND_HTTPS_PROXY=1): Caddy must not pass on a client's."""
    seen = httpx.get(
        f"{balanced}/test-echo-request/",
        timeout=10,
        headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"},
    ).json()
    assert (seen["remote_addr"], seen["scheme"]) == ("127.0.0.1", "http")


@pytest.mark.usefixtures("store_db")
def test_caddy_does_not_cut_a_long_poll(balanced):
    team = factories.team()
    token = factories.endpoint(team).token
    started = time.monotonic()
    response = httpx.post(
        f"{balanced}/api/v1/claim_next",
        json={"queue": "default", "wait_seconds": 5},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    assert response.json() == {"empty": True}
    assert 4.5 <= elapsed < 15, elapsed


@pytest.mark.usefixtures("store_db")
def test_caddy_upgrades_a_websocket(balanced):
    user = factories.user()
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    host = balanced.removeprefix("http://")
    status, headers, message = websocket_first_message(
        host, "/ws/board/", cookie=f"{settings.SESSION_COOKIE_NAME}={cookie}"
    )
    assert status == 101, (status, headers)
    assert message["type"] == "status", message


WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def websocket_first_message(host: str, path: str, *, cookie: str, timeout: float = 15) -> tuple[int, dict, dict]:
    """Open a websocket by hand (RFC 6455: the handshake and one unmasked text frame from the
    server) and return the status, the response headers and the first message, decoded."""
    key = base64.b64encode(os.urandom(16)).decode()
    hostname, port = host.rsplit(":", 1)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://{host}\r\n"
        f"Cookie: {cookie}\r\n\r\n"
    )
    with socket.create_connection((hostname, int(port)), timeout=timeout) as sock:
        sock.sendall(request.encode())
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(4096)
            assert chunk, f"connection closed during the handshake: {buffer!r}"
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        if status != 101:
            return status, headers, {}
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        assert headers.get("sec-websocket-accept") == accept, headers

        def read(n: int) -> bytes:
            nonlocal buffer
            while len(buffer) < n:
                chunk = sock.recv(4096)
                assert chunk, "connection closed before the first message"
                buffer += chunk
            data, buffer = buffer[:n], buffer[n:]
            return data

        first, second = read(2)
        assert first & 0x0F == 0x1, f"expected a text frame, got opcode {first & 0x0F}"
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(read(2), "big")
        elif length == 127:
            length = int.from_bytes(read(8), "big")
        return status, headers, json.loads(read(length))

"""What the over-the-wire benchmarks share (the HTTP drain, the watched drain, long-poll pickup): a
real Board server, tokens, signed-in humans, and the machine's state.

Why a subprocess: the figures are about Board as deployed, ``daphne board.asgi:application`` in
its own process with its own event loop, connection pools and LISTEN connection, talking HTTP
and websockets; the benchmark process (its workers, its clients) only talks to it over the
loopback. Its CPU is read from ``/proc`` so each figure can say where the time went.

``app`` and ``settings_module`` let a run serve a variant (the proposals in
a settings module of its own) side by side with the baseline, without editing Board.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from psycopg.conninfo import conninfo_to_dict

from bench.common import setup_django

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class BoardServer:
    """A running ``daphne board.asgi:application`` on 127.0.0.1."""

    process: subprocess.Popen
    port: int
    log_path: Path
    label: str = "board"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process so far (all its threads)."""
        import psutil

        t = psutil.Process(self.pid).cpu_times()
        return t.user + t.system

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # lets a cProfile wrapper write its stats
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> BoardServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def database_url(conninfo: str) -> str:
    """A libpq conninfo as the ``DATABASE_URL`` a Board server reads (Unix sockets included)."""
    # Parsed from a string, every value is a str (ConnParam's int is for keyword arguments).
    info = {key: str(value) for key, value in conninfo_to_dict(conninfo).items()}
    user = quote(info.get("user") or "", safe="")
    password = info.get("password")
    auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    host, port, query = info.get("host") or "", info.get("port") or "", ""
    if host.startswith("/"):
        query, host = f"?host={quote(host, safe='')}", ""
    return f"postgresql://{auth}{host}{':' + str(port) if port else ''}/{quote(info['dbname'], safe='')}{query}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_board(
    conninfo: str,
    *,
    app: str = "board.asgi:application",
    settings_module: str = "board.settings",
    label: str = "board",
    profile: str | None = None,
    **env: str,
) -> BoardServer:
    """Start daphne serving ``app`` on ``conninfo``'s database; wait until it accepts connections."""
    port = free_port()
    log_path = Path(tempfile.mkstemp(prefix="board-bench-server-", suffix=".log")[1])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environment.update(
        DJANGO_SETTINGS_MODULE=settings_module,
        DATABASE_URL=database_url(conninfo),
        BOARD_ENV="development",
        DEBUG="0",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    environment.update(env)
    command = [str(Path(sys.executable).with_name("daphne")), "-b", "127.0.0.1", "-p", str(port), app]
    if profile:
        command = [sys.executable, "-m", "cProfile", "-o", profile, *command]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
    server = BoardServer(process, port, log_path, label)
    import socket

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited:\n{server.log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"daphne did not start:\n{server.log()}")


def vend_agent(conn, queues: tuple[str, ...] = ("bench",), *, team_id=None):
    """A team (unless given) and an endpoint with every verb on ``queues``: (scope, token, team id).

    Like ``bench.common.make_agent``, but keeps the token, which the HTTP API needs.
    """
    setup_django()
    from todos.core.db import execute
    from todos.core.store import endpoints, teams
    from todos.core.store.endpoints import SCOPE_VERBS
    from todos.core.store.scopes import AgentScope

    slug = f"bench-{uuid.uuid4().hex[:10]}"
    if team_id is None:
        team_id = execute(teams.create_team(slug=slug, name=slug), conn).id
    vended = execute(
        endpoints.vend(None, team_id=team_id, name=slug, slug=slug, verbs=list(SCOPE_VERBS), queues=list(queues)), conn
    )
    ep = vended.endpoint
    scope = AgentScope(
        endpoint_id=uuid.UUID(str(ep.id)),
        team_id=ep.team_id,
        queues=tuple(ep.scope_queues),
        default_lease_ttl_seconds=ep.default_lease_ttl_seconds,
        verbs=frozenset(ep.scope_verbs),
    )
    return scope, vended.token, team_id


def clear_todos(conninfo: str) -> None:
    """Empty the todo tables between rounds that share one database (and one server)."""
    from bench.common import connect
    from todos.live.relay import rebuild_counts

    with connect(conninfo) as conn:
        conn.execute("DELETE FROM todos")  # attempts go with them (ON DELETE CASCADE)
        rebuild_counts(conn)  # the rows went behind the store's back: recount (drops their log rows)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


class LoadSampler:
    """The 1-minute load average sampled every few seconds during a run: a shared 2-core machine
    is the context of every figure, so each run says what it ran beside."""

    def __init__(self, every: float = 5.0):
        import threading

        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)

    def _run(self, every: float) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        if not self.samples:
            return "n/a"
        return f"{min(self.samples):.1f}–{max(self.samples):.1f} (mean {sum(self.samples) / len(self.samples):.1f})"


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]

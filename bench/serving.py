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
    """A running ``daphne board.asgi:application`` on 127.0.0.1: one process, or several serving
    one listening socket (as ``manage.py up --processes N`` runs them)."""

    process: subprocess.Popen
    port: int
    log_path: Path
    label: str = "board"
    more: tuple[subprocess.Popen, ...] = ()  # the other processes on the same socket

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def processes(self) -> tuple[subprocess.Popen, ...]:
        return (self.process, *self.more)

    def cpu_seconds(self) -> float:
        """User + system CPU of the server processes so far (all their threads)."""
        import psutil

        total = 0.0
        for process in self.processes:
            t = psutil.Process(process.pid).cpu_times()
            total += t.user + t.system
        return total

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # lets a cProfile wrapper write its stats
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
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
    processes: int = 1,
    **env: str,
) -> BoardServer:
    """Start daphne serving ``app`` on ``conninfo``'s database; wait until it accepts connections.

    ``processes`` > 1: that many daphne processes adopt one listening socket (``--fd``), the way
    ``manage.py up --processes`` serves; the kernel hands each connection to one of them."""
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
    daphne = str(Path(sys.executable).with_name("daphne"))
    listener = None
    if processes > 1:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        port = listener.getsockname()[1]
        commands = [[daphne, "-v", "0", "--fd", str(listener.fileno()), app] for _ in range(processes)]
    else:
        port = free_port()
        commands = [[daphne, "-b", "127.0.0.1", "-p", str(port), app]]
    if profile:
        commands[0] = [sys.executable, "-m", "cProfile", "-o", profile, *commands[0]]
    started = []
    with open(log_path, "wb") as log:
        for command in commands:
            fds = (listener.fileno(),) if listener is not None else ()
            started.append(
                subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, pass_fds=fds)
            )
    if listener is not None:
        listener.close()  # the servers hold their own copies
    server = BoardServer(started[0], port, log_path, label, more=tuple(started[1:]))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(process.poll() is not None for process in started):
            server.stop()
            raise RuntimeError(f"daphne exited:\n{server.log()}")
        if _answers(port) and (processes == 1 or _all_listening(started)):
            return server
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"daphne did not start:\n{server.log()}")


def _answers(port: int) -> bool:
    """Whether a server on ``port`` answers HTTP (with one shared socket, the kernel accepts
    connections before any process serves it)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # an answer all the same
    except OSError:
        return False


def _all_listening(processes) -> bool:
    """Whether every process has loaded the application (its relay thread runs: a second thread)."""
    import psutil

    return all(psutil.Process(p.pid).num_threads() > 1 for p in processes)


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

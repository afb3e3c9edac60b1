"""Small readers and setup shortcuts for the store's tests.

Reads go straight to PostgreSQL on a dedicated connection, so a test sees exactly what the store
committed. The only raw writes here are *setup* shortcuts that move a clock forward (a lapsed
lease, a due retry, an old completion); every lifecycle transition under test goes through the
store.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from datetime import timedelta

import psycopg

from tests.factories import relayed
from tests.support.infinity import read_infinity
from todos.core import db


def sql(query: str, params=None) -> list[dict]:
    with db.connect() as conn:
        cur = read_infinity(conn).execute(query, params)  # a blocked todo's raw next_retry_at
        return cur.fetchall() if cur.description else []


def one(query: str, params=None) -> dict:
    rows = sql(query, params)
    assert len(rows) == 1, rows
    return rows[0]


def row(todo_id: str) -> dict | None:
    rows = sql("SELECT * FROM todos WHERE id = %s", (todo_id,))
    return rows[0] if rows else None


def dependency_writes() -> dict:
    """What a create with parents writes besides its todo: dependency rows, and parents marked
    ``has_children`` (a refused create writes neither)."""
    return sql(
        """SELECT (SELECT count(*) FROM todo_dependencies) AS edges,
                  (SELECT count(*) FROM todos WHERE has_children) AS marked"""
    )[0]


def attempts(todo_id: str) -> list[dict]:
    """Every attempt row of the todo (all columns, the token hash included), oldest first."""
    return sql("SELECT * FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (todo_id,))


def open_attempts(todo_id: str) -> list[dict]:
    return [a for a in attempts(todo_id) if a["ended_at"] is None]


def audit(todo_id: str | None = None) -> list[dict]:
    if todo_id is None:
        return sql("SELECT * FROM audit_log ORDER BY id")
    return sql("SELECT * FROM audit_log WHERE todo_id = %s ORDER BY id", (todo_id,))


def counts() -> dict[str, int]:
    return one(
        """SELECT (SELECT count(*) FROM todos) AS todos, (SELECT count(*) FROM todo_attempts) AS attempts,
                  (SELECT count(*) FROM audit_log) AS audit, (SELECT count(*) FROM endpoints) AS endpoints,
                  (SELECT count(*) FROM queue_pauses) AS pauses"""
    )


def snapshot(todo_id: str) -> tuple[dict | None, list[dict], int]:
    """Everything a transition could change about one todo: its row, its attempts, its audit rows."""
    return row(todo_id), attempts(todo_id), len(audit(todo_id))


def db_now():
    return one("SELECT now() AS now")["now"]


def lapse(todo_id: str, by: timedelta = timedelta(seconds=5)) -> None:
    """Setup only: make a claimed todo's lease lapse without waiting for it."""
    with db.connect() as conn:
        n = conn.execute(
            "UPDATE todos SET lease_expires_at = now() - %s WHERE id = %s AND state = 'claimed'", (by, todo_id)
        ).rowcount
    assert n == 1, f"{todo_id} is not claimed"


def make_due(todo_id: str) -> None:
    """Setup only: make a failed todo's retry window elapse."""
    with db.connect() as conn:
        n = conn.execute(
            "UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s AND next_retry_at IS NOT NULL",
            (todo_id,),
        ).rowcount
    assert n == 1, f"{todo_id} has no retry window"


def age_completion(todo_id: str, days: int) -> None:
    """Setup only: pretend a terminal todo finished ``days`` days ago."""
    with db.connect() as conn:
        conn.execute("UPDATE todos SET completed_at = now() - make_interval(days => %s) WHERE id = %s", (days, todo_id))


class Listener:
    """LISTEN on a dedicated connection; :meth:`drain` returns what arrived, as parsed JSON.

    Board notifications come from the relay, a moment after the commit: listening starts once
    what was committed before is relayed, and :meth:`drain` waits for the relay to catch up."""

    def __init__(self, *channels: str):
        relayed()
        self.conn = db.connect()
        for channel in channels:
            self.conn.execute(f"LISTEN {channel}")

    def drain(self, timeout: float = 0.3) -> list[tuple[str, dict]]:
        relayed()
        got = []
        for note in self.conn.notifies(timeout=timeout):
            got.append((note.channel, json.loads(note.payload)))
        return got

    def close(self) -> None:
        self.conn.close()


@contextmanager
def listening(*channels: str):
    listener = Listener(*channels)
    try:
        yield listener
    finally:
        listener.close()


def run_threads(n: int, work, *, timeout: float = 30.0) -> list:
    """Run ``work(i, barrier)`` in ``n`` threads, each on its own connection, started together.

    Returns one outcome per thread: the value returned, or the exception raised.
    """
    barrier = threading.Barrier(n)
    outcomes: list = [None] * n

    def target(i: int) -> None:
        try:
            outcomes[i] = work(i, barrier)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcomes[i] = exc

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return outcomes


def waiting_on_locks() -> int:
    """How many sessions of this database are blocked on a lock right now."""
    return one(
        """SELECT count(*) AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'"""
    )["n"]


def behind(holder_stmt, waiter_stmt):
    """Force the interleaving a race only sometimes finds: ``holder_stmt`` runs in an open
    transaction (keeping its row locks), ``waiter_stmt`` starts on another connection and blocks
    on those locks, then the holder commits and the waiter resumes against the changed row.

    Returns ``(holder result, waiter result or the exception it raised)``.
    """

    from todos.core.db import execute

    outcome: dict = {}
    with db.connect(autocommit=False) as holder:
        held = execute(holder_stmt, holder)

        def wait() -> None:
            with db.connect() as conn:
                try:
                    outcome["value"] = execute(waiter_stmt, conn)
                except BaseException as exc:  # noqa: BLE001 - reported to the test
                    outcome["value"] = exc

        thread = threading.Thread(target=wait)
        thread.start()
        deadline = time.monotonic() + 10
        while waiting_on_locks() < 1:
            assert time.monotonic() < deadline, "the waiter never blocked on the holder's lock"
            assert thread.is_alive(), f"the waiter did not wait: {outcome.get('value')!r}"
            time.sleep(0.01)
        holder.commit()
        thread.join(10)
    assert not thread.is_alive()
    return held, outcome["value"]


__all__ = [
    "Listener",
    "age_completion",
    "attempts",
    "audit",
    "behind",
    "counts",
    "db_now",
    "lapse",
    "listening",
    "make_due",
    "one",
    "open_attempts",
    "psycopg",
    "row",
    "run_threads",
    "snapshot",
    "sql",
    "waiting_on_locks",
]

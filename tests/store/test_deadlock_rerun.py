"""A statement PostgreSQL picks as a deadlock's victim runs again (``todos.core.db.execute``).

Two statements that lock the same rows in opposite orders deadlock for real here: two threads,
two autocommit connections, a function that locks one row, waits for the other thread to lock
the second, and then wants it. PostgreSQL rolls one back; on an autocommit connection the store
runs it again, so both calls succeed and each row is written exactly once per call. Inside a
caller's transaction it cannot: the error reaches the caller.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

from tests.store.helpers import run_threads
from todos.core import db
from todos.core.db import Statement, execute


@pytest.fixture
def crossing():
    """A two-row table and ``lock_in_order(first, second, pause)``: lock ``first``, wait ``pause``
    seconds (both callers then hold their first row), then lock ``second``."""
    name = f"deadlock_probe_{uuid.uuid4().hex[:8]}"
    with db.connect() as conn:
        conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, writes int NOT NULL DEFAULT 0)")
        conn.execute(f"INSERT INTO {name} (id) VALUES (1), (2)")
        conn.execute(
            f"""CREATE FUNCTION {name}_lock(first int, second int, pause float8) RETURNS int LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE {name} SET writes = writes + 1 WHERE id = first;
                PERFORM pg_sleep(pause);
                UPDATE {name} SET writes = writes + 1 WHERE id = second;
                RETURN 1;
            END $$"""
        )
    try:
        yield name
    finally:
        with db.connect() as conn:
            conn.execute(f"DROP FUNCTION {name}_lock(int, int, float8)")
            conn.execute(f"DROP TABLE {name}")


def lock_in_order(name: str, first: int, second: int, pause: float = 0.3) -> Statement[int]:
    return Statement(
        f"SELECT {name}_lock(%(a)s, %(b)s, %(p)s) AS n",  # type: ignore[arg-type]
        {"a": first, "b": second, "p": pause},
        lambda rows: rows[0]["n"],
    )


def writes(name: str) -> dict[int, int]:
    with db.connect() as conn:
        return {r["id"]: r["writes"] for r in conn.execute(f"SELECT id, writes FROM {name}").fetchall()}  # type: ignore[arg-type]


def test_the_deadlock_victim_runs_again_and_both_calls_succeed(crossing):
    def work(i, barrier):
        with db.connect() as conn:
            barrier.wait()
            return execute(lock_in_order(crossing, 1 + i, 2 - i), conn)

    outcomes = run_threads(2, work, timeout=30)
    assert outcomes == [1, 1]
    # the victim's first run was rolled back whole: each row written once by each call
    assert writes(crossing) == {1: 2, 2: 2}


def test_inside_a_transaction_the_deadlock_reaches_the_caller(crossing):
    """The transaction's side asks for its second row first, so its deadlock check runs first
    and PostgreSQL makes it the victim: the caller sees the error, its transaction wrote
    nothing, and the other side's statement went through once."""

    def work(i, barrier):
        with db.connect(autocommit=(i == 1)) as conn:
            barrier.wait()
            if i == 0:
                return execute(lock_in_order(crossing, 1, 2, pause=0.2), conn)
            return execute(lock_in_order(crossing, 2, 1, pause=0.6), conn)

    outcomes = run_threads(2, work, timeout=30)
    assert isinstance(outcomes[0], psycopg.errors.DeadlockDetected), outcomes
    assert outcomes[1] == 1
    assert writes(crossing) == {1: 1, 2: 1}

"""``bench.rate_limit`` in smoke mode against the test database: real Board processes, spawned
workers long-polling over HTTP, and the ring's log; so the harness cannot rot between full runs."""

from __future__ import annotations

import pytest

from bench import rate_limit
from todos.core import db

pytestmark = [pytest.mark.usefixtures("store_db"), pytest.mark.slow]


def test_the_rate_limit_bench_runs_and_the_limit_holds():
    try:
        out = rate_limit.run(db.conninfo(), rate=5, processes=2, workers=4, seconds=3.0)
    finally:
        with db.connect() as conn:
            conn.execute("DROP TRIGGER IF EXISTS bench_rate_logged ON rate_limits")
            conn.execute("DROP FUNCTION IF EXISTS bench_rate_logged()")
            conn.execute("DROP TABLE IF EXISTS bench_rate_log")
    assert out["most_in_1s"] <= 5
    assert 5 <= out["claims"] <= 15 and out["completed"] >= out["claims"] - 4

"""A loop whose sweep keeps failing (the database is down) backs off instead of retrying, and
logging a traceback, every interval; it returns to its interval once a sweep succeeds."""

from __future__ import annotations

import logging
import threading
import time

from todos.ops import loops


def test_the_wait_doubles_per_failure_up_to_the_cap():
    assert loops.backoff(0.25, 0) == 0.25
    assert [loops.backoff(0.25, n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert loops.backoff(0.25, 20) == loops.MAX_BACKOFF_SECONDS
    assert loops.backoff(3600.0, 1) == 3600.0  # a slow loop keeps its own interval


def test_a_failing_sweep_backs_off_logs_one_traceback_and_recovers(caplog, monkeypatch):
    monkeypatch.setattr(loops, "MAX_BACKOFF_SECONDS", 0.2)
    calls: list[float] = []
    down = threading.Event()
    down.set()

    def run() -> int:
        calls.append(time.monotonic())
        if down.is_set():
            raise ConnectionError("the database is restarting")
        return 0

    sweep = loops.Sweep("flaky", lambda: 0.005, run, batch=10)
    stop = threading.Event()
    caplog.set_level(logging.INFO, logger="todos.ops.loops")
    thread = threading.Thread(target=loops._loop, args=(sweep, stop))
    thread.start()
    try:
        time.sleep(1.0)
        failing = len(calls)
        down.clear()
        time.sleep(0.5)
    finally:
        stop.set()
        thread.join(5)
    # Every 5 ms would be ~200 tries in a second; doubling from 5 ms to the 0.2 s cap is about 10.
    assert 4 <= failing <= 15, failing
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1 and "flaky sweep failed" in tracebacks[0].getMessage()
    again = [r.getMessage() for r in caplog.records if "failed again" in r.getMessage()]
    assert len(again) == failing - 1 and "ConnectionError" in again[0]
    assert any("flaky sweep recovered after" in r.getMessage() for r in caplog.records)
    assert len(calls) - failing > 20  # back on its 5 ms interval

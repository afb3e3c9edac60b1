"""A sweep interrupted by the process stopping logs nothing at ERROR (one DEBUG line, and its loop
ends), while the same failure with no stop coming is still logged with its traceback."""

from __future__ import annotations

import logging
import threading

import psycopg
import pytest

from todos.ops import loops


def admin_shutdown() -> psycopg.Error:
    return psycopg.errors.AdminShutdown("terminating connection due to administrator command")


def run_loop(run, stop: threading.Event, within: float = 10.0) -> threading.Thread:
    sweep = loops.Sweep("change-log cap", lambda: 0.01, run, batch=2**62, unit="change-log rows dropped")
    thread = threading.Thread(target=loops._loop, args=(sweep, stop))
    thread.start()
    thread.join(within)
    return thread


def loud(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


@pytest.fixture
def records(caplog):
    caplog.set_level(logging.DEBUG, logger="todos.ops.loops")
    return caplog


def test_a_sweep_failing_after_the_stop_was_set_logs_only_at_debug(records):
    stop = threading.Event()

    def run() -> int:
        stop.set()  # up stops the loops, then the embedded PostgreSQL stops under this sweep
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    assert not run_loop(run, stop).is_alive()
    assert loud(records) == []
    (line,) = [r for r in records.records if r.name == "todos.ops.loops"]
    assert line.levelno == logging.DEBUG
    assert line.getMessage() == "change-log cap sweep interrupted by shutdown (OperationalError)"


def test_the_database_shutting_down_just_before_the_stop_logs_only_at_debug(records, monkeypatch):
    """Ctrl-C reaches PostgreSQL and up together: the sweep may see the server stop first."""
    monkeypatch.setattr(loops, "SHUTDOWN_GRACE_SECONDS", 5.0)
    stop = threading.Event()

    def run() -> int:
        threading.Timer(0.2, stop.set).start()
        raise admin_shutdown()

    assert not run_loop(run, stop).is_alive()
    assert loud(records) == []
    assert [r.levelno for r in records.records if r.name == "todos.ops.loops"] == [logging.DEBUG]


def test_a_real_failure_outside_shutdown_still_logs_its_traceback(records):
    stop = threading.Event()
    calls = []

    def run() -> int:
        calls.append(1)
        if len(calls) == 2:
            stop.set()  # end the test's loop once the first failure was logged
            return 0
        raise RuntimeError("a bug in the sweep")

    assert not run_loop(run, stop).is_alive()
    (error,) = loud(records)
    assert error.levelno == logging.ERROR and error.exc_info
    assert error.getMessage().startswith("change-log cap sweep failed; retrying in")


def test_the_database_shutting_down_with_no_stop_coming_is_a_failure(records, monkeypatch):
    """A PostgreSQL restart while this process keeps running is an outage, logged as one."""
    monkeypatch.setattr(loops, "SHUTDOWN_GRACE_SECONDS", 0.05)
    stop = threading.Event()
    calls = []

    def run() -> int:
        calls.append(1)
        if len(calls) == 2:
            stop.set()
            return 0
        raise admin_shutdown()

    assert not run_loop(run, stop).is_alive()
    (error,) = loud(records)
    assert error.levelno == logging.ERROR and "change-log cap sweep failed" in error.getMessage()

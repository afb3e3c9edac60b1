"""The background loops: reaper, run-time limits, due-retry requeue, retention, endpoint expiry, bulk
jobs, schedules, and the change log's cap (for when no relay drains it; the relay itself runs in
``todos/live/relay.py``).

Each loop runs one store sweep on its own interval (settings ``BOARD_*_INTERVAL``) in a daemon
thread. Sweeps take rows with ``FOR UPDATE SKIP LOCKED``, so every Board process can run the loops
at once: they share the work instead of queueing behind each other. A sweep that finds a full batch
runs again at once. A failed sweep (database restarting, say) is retried with a doubling wait, from
the loop's interval up to ``MAX_BACKOFF_SECONDS``: the schedules loop runs every quarter second,
and an outage must not become four tracebacks a second per process. The first failure is logged
with its traceback, the rest as one line each, and the recovery once.

A sweep that fails because this process is stopping is no failure: ``up`` sets the loops' stop
event, then the embedded PostgreSQL stops under any sweep still running (and Ctrl-C reaches that
PostgreSQL at the same moment as ``up``). Such a sweep logs one DEBUG line and its loop ends
(:func:`interrupted_by_shutdown`); the same error with no stop coming is logged as a failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from django.conf import settings

from todos.core import telemetry
from todos.core.db import execute
from todos.core.store import background, endpoints, schedules
from todos.ops import bulk

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sweep:
    name: str
    interval: Callable[[], float]
    run: Callable[[], int]  # returns how many rows it changed
    batch: int
    unit: str = "todos changed"  # what ``run`` counts, for the log


def _reap() -> int:
    return execute(background.reap(background.SWEEP_LIMIT)).count


def _time_out() -> int:
    return execute(background.time_out(background.SWEEP_LIMIT)).count


def _requeue() -> int:
    return execute(background.requeue_due_retries(background.SWEEP_LIMIT)).count


def _purge() -> int:
    return execute(background.purge_terminal(background.SWEEP_LIMIT)).count


def _expire() -> int:
    return len(execute(endpoints.expire_due(100)))


def _fire_schedules() -> int:
    return len(schedules.fire_due(schedules.SWEEP_LIMIT))


def _cap_change_log() -> int:
    from todos.core.db import connect
    from todos.live.relay import FINISHED_RETENTION_SQL, FLOW_RETENTION_SQL, cap_change_log

    with connect() as conn:
        conn.execute(FINISHED_RETENTION_SQL)
        conn.execute(FLOW_RETENTION_SQL)
        return cap_change_log(conn)


SWEEPS = (
    Sweep("reaper", lambda: settings.BOARD_REAPER_INTERVAL, _reap, background.SWEEP_LIMIT),
    # Run-time limits ride on the reaper's interval: both end attempts, one for a silent holder, one
    # for a holder that heartbeats past its limit (docs/lifecycle.md, "Run-time limits").
    Sweep("run-time limits", lambda: settings.BOARD_REAPER_INTERVAL, _time_out, background.SWEEP_LIMIT),
    Sweep("requeue", lambda: settings.BOARD_REQUEUE_INTERVAL, _requeue, background.SWEEP_LIMIT),
    Sweep("retention", lambda: settings.BOARD_RETENTION_INTERVAL, _purge, background.SWEEP_LIMIT),
    Sweep("expiry", lambda: settings.BOARD_EXPIRY_INTERVAL, _expire, 100),
    # Periodic schedules (todos/core/store/schedules.py): due schedules are taken FOR UPDATE SKIP LOCKED
    # and each tick is recorded once (schedule_fires' primary key), so every process may sweep.
    # Every second: a tick's lateness is at most about this interval.
    Sweep(
        "schedules",
        lambda: schedules.INTERVAL_SECONDS,
        _fire_schedules,
        schedules.SWEEP_LIMIT,
        unit="schedule ticks fired",
    ),
    # one look per interval: what it drops is never "a full batch"
    Sweep(
        "change-log cap",
        lambda: settings.BOARD_CHANGE_LOG_CAP_INTERVAL,
        _cap_change_log,
        2**62,
        unit="change-log rows dropped",
    ),
    # Bulk jobs (todos/ops/bulk.py): each run fixes one queued job's ids or works one chunk, under row
    # locks, so every process's loop shares the chunks of a job and resumes a dead worker's.
    Sweep(
        "bulk",
        lambda: bulk.INTERVAL_SECONDS,
        lambda: bulk.work_once(),
        1,
        unit="bulk steps (jobs collected, chunks worked)",
    ),
)


def run_sweep_once(sweep: Sweep) -> int:
    """Run ``sweep`` until it finds less than a full batch; return the rows it changed. While
    tracing is on, in a span named for the sweep (docs/telemetry.md)."""
    with telemetry.span(f"sweep {sweep.name}", attributes={"board.sweep": sweep.name}) as span:
        total = 0
        while True:
            changed = sweep.run()
            total += changed
            if changed < sweep.batch:
                if span is not None:
                    span.set_attribute("board.sweep.changed", total)
                return total


MAX_BACKOFF_SECONDS = 30.0


def backoff(interval: float, failures: int) -> float:
    """The wait after ``failures`` consecutive failed sweeps: the loop's interval doubled per
    failure, capped at ``MAX_BACKOFF_SECONDS`` (a loop slower than that keeps its own interval)."""
    return min(interval * 2.0**failures, max(interval, MAX_BACKOFF_SECONDS))


# How long a sweep that met the database shutting down waits for this process's own stop before
# taking it for an outage: a Ctrl-C stops PostgreSQL and ``up`` together, and ``up`` sets the
# stop event once daphne has stopped serving, within a second or so.
SHUTDOWN_GRACE_SECONDS = 2.0
# SQLSTATEs of a server that is stopping: admin_shutdown (57P01, sessions ended by a fast stop),
# cannot_connect_now (57P03, "the database system is shutting down").
SHUTTING_DOWN_SQLSTATES = frozenset({"57P01", "57P03"})


def _database_stopping(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is PostgreSQL stopping or gone mid-statement."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, psycopg.Error) and (
            seen.sqlstate in SHUTTING_DOWN_SQLSTATES or isinstance(seen, psycopg.OperationalError)
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def interrupted_by_shutdown(stop: threading.Event, exc: BaseException) -> bool:
    """Whether a sweep's failure is this process stopping: its stop event is set, or the database
    went away and the stop event follows within ``SHUTDOWN_GRACE_SECONDS``."""
    if stop.is_set():
        return True
    return _database_stopping(exc) and stop.wait(SHUTDOWN_GRACE_SECONDS)


def _loop(sweep: Sweep, stop: threading.Event) -> None:
    failures = 0
    while not stop.is_set():
        try:
            changed = run_sweep_once(sweep)
        except Exception as exc:  # noqa: BLE001 - keep the loop alive; the next try may succeed
            if interrupted_by_shutdown(stop, exc):
                logger.debug("%s sweep interrupted by shutdown (%s)", sweep.name, exc.__class__.__name__)
                return
            failures += 1
            wait = backoff(sweep.interval(), failures)
            if failures == 1:
                logger.exception("%s sweep failed; retrying in %.2g s", sweep.name, wait)
            else:
                logger.warning(
                    "%s sweep failed again (%d in a row: %s); retrying in %.2g s",
                    sweep.name,
                    failures,
                    exc.__class__.__name__,
                    wait,
                )
        else:
            if failures:
                logger.info("%s sweep recovered after %d failures", sweep.name, failures)
            failures = 0
            wait = sweep.interval()
            if changed:
                logger.info("%s: %d %s", sweep.name, changed, sweep.unit)
        stop.wait(wait)


def start_loops(stop: threading.Event, sweeps: tuple[Sweep, ...] = SWEEPS) -> list[threading.Thread]:
    """Start every sweep in a daemon thread; set ``stop`` to end them."""
    threads = []
    for sweep in sweeps:
        thread = threading.Thread(target=_loop, args=(sweep, stop), name=f"board-{sweep.name}", daemon=True)
        thread.start()
        threads.append(thread)
    return threads

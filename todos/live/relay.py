"""The relay: the change log becomes Board notifications and exact counts.

Statements do not NOTIFY the Board: a NOTIFY takes PostgreSQL's one cluster-wide notify lock at
commit and holds it through the WAL flush, so every worker's commits would wait in one line
(bench/README.md). They write ``change_log`` rows instead (``todos.core.store.fragments.log_change``),
and the relay, one per installation, turns those rows into what the Board needs:

* **one pass, one transaction**: take a batch of committed rows (``DELETE … RETURNING``, oldest
  first), send one NOTIFY on ``board_events`` per team, operation and chunk of ids (the message
  shape the listeners already read), add the state deltas to ``todo_counts`` and the finished work
  to ``todo_finished_minutes``. A pass that dies (SIGKILL, lost connection) rolls back whole: its
  rows are still there for the next holder, so nothing is lost or applied twice.
* **one relay at a time**: every Board process and the loops process run a candidate thread; a
  session advisory lock (``RELAY_LOCK``) elects the holder. A holder that dies drops its session
  and its lock; another candidate takes it on its next try (``BOARD_RELAY_ELECTION_SECONDS``).
* **passes never overlap**: each pass also takes the transaction lock ``PASS_LOCK``; anything else
  that rewrites the counts (:func:`rebuild_counts`, the log cap) takes it too.
* **polling**: a pass that found a full batch runs again at once, one that found rows waits
  ``BOARD_RELAY_INTERVAL`` (twice that under a steady stream, :func:`next_wait`), an empty one
  backs off doubling to ``BOARD_RELAY_IDLE_INTERVAL``.
* **bounded log**: while no relay drains it, :func:`cap_change_log` (a background loop) drops rows
  older than ``BOARD_CHANGE_LOG_MAX_AGE`` and marks the counts stale; the next pass rebuilds them
  from ``todos`` (REPEATABLE READ: the counts and the log rows it discards are one snapshot).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, LiteralString

import psycopg
from django.conf import settings

from todos.core import compose, telemetry
from todos.core.db import single_row
from todos.core.words import BoardState, ChangeOp, TodoState
from todos.live.messages import RECOUNT, board_message

if TYPE_CHECKING:
    from todos.core.db import DictConnection

logger = logging.getLogger(__name__)

RELAY_LOCK = 0x626F61726401  # "board" 01: who relays
PASS_LOCK = 0x626F61726402  # "board" 02: one pass (or rebuild, or cap) at a time
# Ids per notification. A log row adds at most ~210 bytes to a message (a 35-byte id, a queue of
# up to 128 characters, a 36-byte endpoint id, JSON quoting): 25 rows stay far below PostgreSQL's
# 8000-byte payload limit whatever the names.
NOTIFY_CHUNK = 25
# How often a holder proves it is alive in relay_state (the log cap reads it).
ALIVE_EVERY: LiteralString = "5 seconds"

# The Board states the rollups count (the charts' completed and failed, the finished minutes).
_DONE: LiteralString = BoardState.DONE.sql
_DEAD: LiteralString = BoardState.DEAD.sql

# The rows of ``taken`` as Board notifications: per team, operation and (for memberships) person,
# in chunks of NOTIFY_CHUNK distinct ids. The same todo seen several times (heartbeats) is one id.
# ``user`` is there for memberships only (json_strip_nulls drops it elsewhere).
_TAKEN_MESSAGE = board_message(
    op="g.op", team="g.team_id", ids="g.ids", queues="g.queues", endpoints="g.endpoints", user="g.user_id"
)
NOTIFY_TAKEN: LiteralString = f"""(SELECT count({_TAKEN_MESSAGE})
        FROM (SELECT team_id, op, user_id,
                     coalesce(array_agg(DISTINCT todo_id) FILTER (WHERE todo_id IS NOT NULL), '{{}}') AS ids,
                     coalesce(array_agg(DISTINCT queue) FILTER (WHERE queue IS NOT NULL), '{{}}') AS queues,
                     coalesce(array_agg(DISTINCT endpoint_id) FILTER (WHERE endpoint_id IS NOT NULL), '{{}}')
                       AS endpoints
              FROM (SELECT *, (dense_rank() OVER (PARTITION BY team_id, op, user_id ORDER BY todo_id) - 1)
                              / {compose.integer(NOTIFY_CHUNK)} AS chunk
                    FROM taken) x
              GROUP BY team_id, op, user_id, chunk) g)"""


def flow_upsert(source: LiteralString) -> LiteralString:
    """The charts' rollup (``todo_flow``, migration 0012) of the log rows of CTE ``source``: each
    row counts toward its queue and toward the team's every-queue row (queue ''), at the minute and
    the hour of its ``at``. completed: the todo became ``done``; failed: an attempt failed (its
    holder's fail, or a run past its run-time limit), or the todo became a dead letter another way;
    died: a lapsed lease was reaped or taken over. The timings go into their histograms
    (``flow_bucket``). Rows of a team deleted meanwhile are dropped.
    """
    return f"""INSERT INTO todo_flow AS f (team_id, grain, queue, at, completed, failed, died, waited, ran)
    SELECT s.team_id, g.grain, q.queue, date_trunc(g.grain, s.at),
           count(*) FILTER (WHERE s.completed)::integer, count(*) FILTER (WHERE s.failed)::integer,
           count(*) FILTER (WHERE s.died)::integer,
           flow_histogram(array_agg(flow_bucket(s.waited)) FILTER (WHERE s.waited IS NOT NULL)),
           flow_histogram(array_agg(flow_bucket(s.ran)) FILTER (WHERE s.ran IS NOT NULL))
    FROM (SELECT fs.team_id, fs.queue, fs.at, fs.waited, fs.ran,
                 fs.state_after = {_DONE} AND fs.state_before IS DISTINCT FROM {_DONE} AS completed,
                 fs.op IN ({ChangeOp.FAIL.sql}, {ChangeOp.TIMEOUT.sql})
                   OR (fs.state_after = {_DEAD} AND fs.state_before IS DISTINCT FROM {_DEAD}) AS failed,
                 fs.op = {ChangeOp.REAP.sql}
                   OR (fs.op = {ChangeOp.CLAIM.sql} AND fs.state_before = {BoardState.CLAIMED.sql}) AS died
          FROM {source} fs
          WHERE fs.todo_id IS NOT NULL AND fs.queue IS NOT NULL
            AND EXISTS (SELECT 1 FROM teams ft WHERE ft.id = fs.team_id)) s
    CROSS JOIN LATERAL (VALUES (s.queue), ('')) q(queue)
    CROSS JOIN (VALUES ('minute'), ('hour')) g(grain)
    WHERE s.completed OR s.failed OR s.died OR s.waited IS NOT NULL OR s.ran IS NOT NULL
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (team_id, grain, queue, at) DO UPDATE SET
        completed = f.completed + EXCLUDED.completed, failed = f.failed + EXCLUDED.failed,
        died = f.died + EXCLUDED.died,
        waited = flow_add(f.waited, EXCLUDED.waited), ran = flow_add(f.ran, EXCLUDED.ran)"""


# One pass, over the rows from %(floor)s on (FloorWatch: every row below it was taken). Counts
# move by the sum of each batch's deltas per (endpoint, queue, state); rows of an endpoint deleted
# meanwhile are dropped (its todos and counts went with it). A count that would go below zero means
# the counts drifted (rows written behind the store's back): the pass marks them stale, and the
# next one rebuilds them.
PASS_SQL: LiteralString = f"""
WITH taken AS (
    DELETE FROM change_log
    -- from the floor, unless the log has new storage (truncated) since it was set: then from the start
    WHERE id IN (SELECT id FROM change_log
                 WHERE id >= CASE WHEN pg_relation_filenode('change_log') = %(filenode)s THEN %(floor)s ELSE 0 END
                 ORDER BY id LIMIT %(batch)s)
    RETURNING *
),
delta AS (
    SELECT t.endpoint_id, t.queue, s.state, sum(s.d) AS d
    FROM taken t CROSS JOIN LATERAL (VALUES (t.state_before, -1), (t.state_after, 1)) AS s(state, d)
    WHERE t.todo_id IS NOT NULL AND s.state IS NOT NULL
      AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = t.endpoint_id)
    GROUP BY 1, 2, 3
    HAVING sum(s.d) <> 0
),
counted AS (
    INSERT INTO todo_counts AS c (endpoint_id, queue, state, n)
    SELECT endpoint_id, queue, state, d FROM delta
    ON CONFLICT (endpoint_id, queue, state) DO UPDATE SET n = c.n + EXCLUDED.n
    RETURNING c.n
),
finished AS (
    INSERT INTO todo_finished_minutes AS f (endpoint_id, queue, minute, done, dead)
    SELECT t.endpoint_id, t.queue, date_trunc('minute', t.at),
           count(*) FILTER (WHERE t.state_after = {_DONE}), count(*) FILTER (WHERE t.state_after = {_DEAD})
    FROM taken t
    WHERE t.state_after IN ({_DONE}, {_DEAD}) AND t.state_before IS DISTINCT FROM t.state_after
      AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = t.endpoint_id)
    GROUP BY 1, 2, 3
    ON CONFLICT (endpoint_id, queue, minute) DO UPDATE SET done = f.done + EXCLUDED.done, dead = f.dead + EXCLUDED.dead
),
flowed AS ({flow_upsert("taken")}),
state AS (
    UPDATE relay_state SET
        counts_stale = counts_stale OR EXISTS (SELECT 1 FROM counted WHERE n < 0),
        alive_at = now()
    WHERE alive_at IS NULL OR alive_at < now() - interval '{ALIVE_EVERY}'
       OR EXISTS (SELECT 1 FROM counted WHERE n < 0)
    RETURNING counts_stale
)
SELECT (SELECT count(*) FROM taken) AS taken, (SELECT max(id) FROM taken) AS high,
       pg_relation_filenode('change_log') AS filenode,
       extract(epoch FROM clock_timestamp() - statement_timestamp()) AS took,
       {NOTIFY_TAKEN} AS sent,
       coalesce((SELECT counts_stale FROM state), (SELECT counts_stale FROM relay_state)) AS counts_stale"""

# The counts as they are (todo_counts plus the log's deltas not yet applied) against todos.
DRIFT_SQL: LiteralString = """
WITH actual AS (
    SELECT endpoint_id, queue, todo_board_state(state, next_retry_at) AS state, count(*) AS n
    FROM todos GROUP BY 1, 2, 3
), logged AS (
    SELECT c.endpoint_id, c.queue, s.state, sum(s.d) AS n
    FROM change_log c CROSS JOIN LATERAL (VALUES (c.state_before, -1), (c.state_after, 1)) AS s(state, d)
    WHERE c.todo_id IS NOT NULL AND s.state IS NOT NULL
    GROUP BY 1, 2, 3
), counted AS (
    SELECT endpoint_id, queue, state, sum(n) AS n FROM (
        SELECT endpoint_id, queue, state, n FROM todo_counts
        UNION ALL SELECT endpoint_id, queue, state, n FROM logged) k
    GROUP BY 1, 2, 3
)
SELECT coalesce(a.endpoint_id, c.endpoint_id) AS endpoint_id, coalesce(a.queue, c.queue) AS queue,
       coalesce(a.state, c.state) AS state, coalesce(c.n, 0)::bigint AS was, coalesce(a.n, 0)::bigint AS now
FROM actual a FULL JOIN counted c USING (endpoint_id, queue, state)
WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = coalesce(a.endpoint_id, c.endpoint_id))
ORDER BY 1, 2, 3"""

# The rebuild, in one REPEATABLE READ snapshot: the log rows it can see are the changes already in
# the todos it counts, so it sends them, adds them to the charts' rollup and drops them; rows
# committed later stay for the next pass. (Rows the log cap dropped are missing from the charts.)
REBUILD_STATEMENTS = (
    f"""WITH taken AS (DELETE FROM change_log RETURNING *),
        flowed AS ({flow_upsert("taken")})
        SELECT {NOTIFY_TAKEN} AS sent""",
    "DELETE FROM todo_counts",
    """INSERT INTO todo_counts (endpoint_id, queue, state, n)
       SELECT endpoint_id, queue, todo_board_state(state, next_retry_at), count(*) FROM todos GROUP BY 1, 2, 3""",
    # The same boundary on both sides, a whole minute: the minute that straddles "an hour ago" is
    # deleted and rebuilt whole (deleting after the instant but rebuilding from its minute hit
    # that minute's row, which was still there: a duplicate key).
    "DELETE FROM todo_finished_minutes WHERE minute >= date_trunc('minute', now() - interval '1 hour')",
    f"""INSERT INTO todo_finished_minutes (endpoint_id, queue, minute, done, dead)
       SELECT endpoint_id, queue, date_trunc('minute', completed_at),
              count(*) FILTER (WHERE state = {TodoState.DONE.sql}),
              count(*) FILTER (WHERE state = {TodoState.FAILED.sql})
       FROM todos
       WHERE completed_at >= date_trunc('minute', now() - interval '1 hour')
         AND todo_board_state(state, next_retry_at) IN ({_DONE}, {_DEAD})
       GROUP BY 1, 2, 3""",
    "UPDATE relay_state SET counts_stale = false, rebuilt_at = now()",
)
# After a rebuild every team's counts may have moved: one notification per team says so.
NOTIFY_RECOUNT: LiteralString = f"""
SELECT count({board_message(op=f"'{RECOUNT}'", team="t.id")}) AS sent
FROM teams t"""

# The cap: only when no pass has proved a relay alive for the whole age (a relay that is merely
# busy keeps alive_at fresh), drop what is older than the age, and mark the counts stale.
CAP_SQL: LiteralString = """
WITH dropped AS (
    DELETE FROM change_log
    WHERE at < now() - make_interval(secs => %(age)s)
      AND (SELECT alive_at IS NULL OR alive_at < now() - make_interval(secs => %(age)s) FROM relay_state)
    RETURNING id
),
marked AS (UPDATE relay_state SET counts_stale = true WHERE EXISTS (SELECT 1 FROM dropped))
SELECT count(*) AS dropped FROM dropped"""

FINISHED_RETENTION_SQL: LiteralString = "DELETE FROM todo_finished_minutes WHERE minute < now() - interval '8 days'"
# The charts read an hour of minutes and seven days of hours: a day and eight days are kept.
FLOW_RETENTION_SQL: LiteralString = """DELETE FROM todo_flow
WHERE (grain = 'minute' AND at < now() - interval '1 day') OR (grain = 'hour' AND at < now() - interval '8 days')"""


@dataclass(frozen=True)
class Pass:
    taken: int
    sent: int
    counts_stale: bool
    high: int | None = None  # the highest id taken (None: none)
    filenode: int | None = None  # the log's storage the pass read
    took: float = 0.0  # seconds the pass's statement ran (waiting for the pass lock not included)


@dataclass(frozen=True)
class Drift:
    endpoint_id: object
    queue: str
    state: str
    was: int
    now: int


PASS_SETUP_SQL: LiteralString = "SELECT pg_advisory_xact_lock(%(lock)s), set_config('enable_seqscan', 'off', true)"


def relay_pass(conn: DictConnection, *, batch: int | None = None, floor: int = 0, filenode: int | None = None) -> Pass:
    """One pass on ``conn`` (autocommit), in one transaction, over the log rows from ``floor`` on
    (from the start if the log's storage is no longer ``filenode``). Callers hold the relay lock,
    or know that no relay runs (tests, the recount command)."""
    size: int = batch or settings.BOARD_RELAY_BATCH
    with telemetry.span("relay pass", attributes={"board.relay.batch": size}) as span:
        done = _relay_pass(conn, size, floor, filenode)
        if span is not None:
            span.set_attribute("board.relay.taken", done.taken)
            span.set_attribute("board.relay.sent", done.sent)
        return done


def _relay_pass(conn: DictConnection, batch: int, floor: int, filenode: int | None) -> Pass:
    with conn.transaction():
        # The log is read as a range of its primary key, from the floor: a plan that scans the
        # table instead (the planner's choice for a table it last saw nearly empty) would read
        # every dead version the floor is there to skip.
        conn.execute(PASS_SETUP_SQL, {"lock": PASS_LOCK})
        row = single_row(conn.execute(PASS_SQL, {"batch": batch, "floor": floor, "filenode": filenode}))
    return Pass(
        taken=row["taken"],
        sent=row["sent"],
        counts_stale=row["counts_stale"],
        high=row["high"],
        filenode=row["filenode"],
        took=float(row["took"]),
    )


# The transactions that may still commit log rows: those holding the lock every INSERT into
# change_log takes (RowExclusiveLock, to the end of the transaction), the relay itself aside.
# Readers (AccessShareLock) do not count: a long report must not hold the floor back.
LOG_WRITERS_SQL: LiteralString = """
SELECT coalesce(array_agg(DISTINCT virtualtransaction), '{}') AS writers
FROM pg_locks
WHERE locktype = 'relation' AND relation = 'change_log'::regclass AND mode = 'RowExclusiveLock'
  AND pid IS DISTINCT FROM pg_backend_pid()"""
# ...and whether the noted ones still hold it; with the last id handed out (NULL: none since the
# sequence was reset), which tells a floor that no longer holds.
STILL_WRITING_SQL: LiteralString = """
SELECT count(*) AS n,
       (SELECT pg_sequence_last_value(pg_get_serial_sequence('change_log', 'id')::regclass)) AS last_id
FROM pg_locks
WHERE locktype = 'relation' AND relation = 'change_log'::regclass AND mode = 'RowExclusiveLock'
  AND virtualtransaction = ANY(%(writers)s::text[])"""


class FloorWatch:
    """Where a pass may start reading the log: every row below the floor has been taken.

    Why: the relay deletes what it relays, and a deleted row's index entry stays until no snapshot
    can see the row. While a transaction holds an old snapshot (a long report, a session left in a
    transaction), those entries pile up at the low end of the log's index, and a pass that starts
    from the lowest id walks all of them: thousands after a minute. A pass from the floor skips them.

    Ids are handed out in order, but rows commit in any order: a row below the highest id taken
    may still be uncommitted (a straggler). Its transaction had inserted it before the pass that
    saw the higher id, so it held the log's RowExclusiveLock then, and holds it until it ends. So
    after a pass that took all it could see (less than a batch), the watch notes the highest id
    taken and the transactions holding that lock; once none of them holds it, a pass that starts
    after that check sees every straggler, and after that pass the floor moves up past the noted
    id. The checks read ``pg_locks``, at most every ``CHECK_SECONDS``.

    The floor holds for the log's storage and sequence as they were when it was set. A truncated
    log (``TRUNCATE … RESTART IDENTITY`` starts the ids again) has new storage: each pass names the
    storage its floor belongs to and reads from the start when that is gone, and the floor goes
    back to zero. A sequence reset below the floor is found by the checks.
    """

    CHECK_SECONDS = 0.2

    def __init__(self) -> None:
        self.floor = 0
        self._high: int | None = None  # the noted highest id; None: nothing noted
        self._writers: list[str] = []
        self._checked = float("-inf")
        self._ready: int | None = None  # the noted id, once its writers have all finished
        self.filenode: int | None = None  # the log's storage the floor and the noted id belong to

    def before_pass(self, conn: DictConnection, now: float) -> None:
        """Check whether the noted writers have finished (call right before a pass)."""
        self._ready = None
        if (self._high is None and not self.floor) or now - self._checked < self.CHECK_SECONDS:
            return
        self._checked = now
        row = single_row(conn.execute(STILL_WRITING_SQL, {"writers": self._writers}))
        if row["last_id"] is None or row["last_id"] < self.floor - 1:
            self._restart()  # the ids started again
        elif self._high is not None and not row["n"]:
            self._ready = self._high

    def after_pass(self, conn: DictConnection, done: Pass, batch: int, now: float) -> None:
        """Move the floor if the pass saw every straggler below the noted id; note a new one."""
        if done.filenode != self.filenode:
            self._restart()  # new storage (the pass read it from the start)
            self.filenode = done.filenode
        if done.taken >= batch:
            return  # it left rows it could see: nothing follows from this pass
        if self._ready is not None:
            self.floor = max(self.floor, self._ready + 1)
            self._high = self._ready = None
        if self._high is None and done.high is not None and now - self._checked >= self.CHECK_SECONDS:
            self._high = done.high
            self._writers = list(single_row(conn.execute(LOG_WRITERS_SQL))["writers"])
            self._checked = now

    def _restart(self) -> None:
        self.floor, self._high, self._writers, self._ready = 0, None, [], None


def drift(conn: DictConnection) -> list[Drift]:
    """Where the counts (with the log still to relay) differ from ``todos``: nowhere, unless rows
    were written behind the store's back or the log was capped."""
    return [Drift(**row) for row in conn.execute(DRIFT_SQL).fetchall()]


def rebuild_counts(conn: DictConnection) -> list[Drift]:
    """Recompute the counts from ``todos`` and return the drift it corrected.

    The pass lock is taken for the session first, so the REPEATABLE READ snapshot below is taken
    after any running pass committed (a snapshot taken while waiting for the lock would still see
    rows that pass deleted).
    """
    conn.execute("SELECT pg_advisory_lock(%s)", (PASS_LOCK,))
    try:
        previous = conn.isolation_level
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        try:
            with conn.transaction():
                corrected = drift(conn)
                for sql in REBUILD_STATEMENTS:
                    conn.execute(sql)
                if corrected:
                    conn.execute(NOTIFY_RECOUNT)
        finally:
            conn.isolation_level = previous
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (PASS_LOCK,))
    return corrected


def cap_change_log(conn: DictConnection, *, max_age: float | None = None) -> int:
    """Drop log rows no relay has drained for ``max_age`` seconds; returns how many."""
    age = settings.BOARD_CHANGE_LOG_MAX_AGE if max_age is None else max_age
    with conn.transaction():
        locked = single_row(conn.execute("SELECT pg_try_advisory_xact_lock(%s) AS ok", (PASS_LOCK,)))["ok"]
        if not locked:
            return 0  # a pass is running: a relay is alive
        dropped = single_row(conn.execute(CAP_SQL, {"age": age}))["dropped"]
    if dropped:
        logger.warning("change log: no relay for %.0f s; dropped %d rows, the counts will be rebuilt", age, dropped)
    return dropped


class Relay:
    """A relay candidate: a daemon thread with its own connection, relaying while it holds
    ``RELAY_LOCK`` and trying for it while it does not."""

    def __init__(self, *, name: str | None = None, conninfo: str | None = None):
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        # Default: the database itself, past any transaction pooler (todos.core.db.session_conninfo):
        # the election lock is a session lock.
        self.conninfo = conninfo
        self.stop_event = threading.Event()
        self.leading = threading.Event()  # set while this candidate holds the lock (tests, logs)
        self.passes = 0
        self.relayed = 0
        self.floor = FloorWatch()  # the holder's; a new holder starts from the lowest id
        self._thread: threading.Thread | None = None

    def start(self) -> Relay:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="board-relay", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        retry = settings.BOARD_RELAY_ELECTION_SECONDS
        while not self.stop_event.is_set():
            try:
                with self._connect() as conn:
                    self._serve(conn)
            except psycopg.Error as exc:
                if self.leading.is_set():
                    logger.warning("relay %s lost its connection (%s); standing again", self.name, _short(exc))
                else:
                    logger.info("relay candidate %s: database unavailable (%s)", self.name, _short(exc))
            except Exception:  # noqa: BLE001 - never let the thread die: the Board would go quiet
                logger.exception("relay %s failed; standing again", self.name)
            self.leading.clear()
            self.stop_event.wait(retry)

    def _connect(self) -> DictConnection:
        from psycopg.rows import dict_row

        from todos.core.db import DictConnection, session_conninfo

        # Keepalives: a holder whose network vanished must lose its session (and the lock) within
        # seconds, not at the kernel's two-hour default.
        return DictConnection.connect(
            self.conninfo or session_conninfo(),
            autocommit=True,
            row_factory=dict_row,
            application_name="board-relay",
            connect_timeout=10,
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=2,
            keepalives_count=3,
            options="-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3",
        )

    def _serve(self, conn: DictConnection) -> None:
        while not self.stop_event.is_set():
            if single_row(conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (RELAY_LOCK,)))["ok"]:
                break
            self.stop_event.wait(settings.BOARD_RELAY_ELECTION_SECONDS)
        else:
            return
        conn.execute("UPDATE relay_state SET holder = %s, elected_at = now()", (self.name,))
        self.leading.set()
        logger.info("relay: %s is relaying the change log", self.name)
        busy, idle = settings.BOARD_RELAY_INTERVAL, settings.BOARD_RELAY_IDLE_INTERVAL
        batch = settings.BOARD_RELAY_BATCH
        wait = busy
        self.floor = FloorWatch()
        stale = single_row(conn.execute("SELECT counts_stale FROM relay_state"))["counts_stale"]
        while not self.stop_event.is_set():
            if stale:
                corrected = rebuild_counts(conn)
                logger.warning("relay: counts rebuilt from todos (%d corrected)", len(corrected))
            started = time.monotonic()
            self.floor.before_pass(conn, started)
            done = relay_pass(conn, batch=batch, floor=self.floor.floor, filenode=self.floor.filenode)
            finished = time.monotonic()
            self.floor.after_pass(conn, done, batch, finished)
            stale = done.counts_stale
            self.passes += 1
            self.relayed += done.taken
            pause = next_wait(done.taken, wait, busy=busy, idle=idle, batch=batch, spent=done.took)
            if pause is None:
                continue  # more is waiting
            wait = pause
            self.stop_event.wait(wait)


# A pass carrying this many changes means they arrive in a steady stream (at the default interval,
# well over a thousand a second). A pass costs about the same whatever it carries (setting up its
# statement is most of it: bench/README.md, "the relay under load"), so under such a stream the
# relay waits twice BOARD_RELAY_INTERVAL and carries twice as much per pass. Nobody sees the
# difference: each browser is then always inside its coalescing window
# (BOARD_LIVE_COALESCE_SECONDS, 70 ms), so its messages already wait half a window on average.
STREAM_ROWS = 8
# A pass whose statement ran ``spent`` seconds is followed by a wait of at least DUTY times that (at
# most DUTY_WAIT_MAX): when passes grow slow (an old snapshot keeps every rollup row's dead
# versions, which each pass walks), the relay runs them less often instead of taking a core, and
# folds its changes in larger passes. A pass of ordinary cost (about a millisecond) waits its
# interval as before; time spent waiting for the pass lock does not count (a pass behind a rebuild
# is not a slow pass). Measured: bench/README.md, "The agent path under load".
DUTY = 4.0
DUTY_WAIT_MAX = 0.25


def next_wait(taken: int, wait: float, *, busy: float, idle: float, batch: int, spent: float = 0.0) -> float | None:
    """How long the relay waits after a pass that took ``taken`` rows in ``spent`` seconds, the last
    wait being ``wait``: None (run again at once) after a full batch; ``busy`` after some rows,
    twice that under a steady stream; after none, the last wait doubled up to ``idle``; never less
    than ``DUTY`` times ``spent`` (up to ``DUTY_WAIT_MAX``)."""
    if taken >= batch:
        return None
    return max(_paced(taken, wait, busy=busy, idle=idle), min(DUTY * spent, DUTY_WAIT_MAX))


def _paced(taken: int, wait: float, *, busy: float, idle: float) -> float:
    if taken >= STREAM_ROWS:
        return 2 * busy
    if taken:
        return busy
    return min(wait * 2, idle)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


_relay: Relay | None = None
_relay_lock = threading.Lock()


def start_relay() -> Relay | None:
    """This process's relay candidate, started once (``BOARD_RELAY`` off: none)."""
    global _relay
    if not settings.BOARD_RELAY:
        return None
    with _relay_lock:
        if _relay is None:
            _relay = Relay().start()
    return _relay

"""``Worker``: drain queues with handlers, one round trip per job.

    worker = Worker("http://127.0.0.1:8000", token)

    @worker.handler("builds")
    def build(job):
        return f"built {job.payload['ref']}"      # the attempt's summary

    worker.run()                                   # until SIGINT/SIGTERM (or worker.stop())

A handler gets a :class:`Job` and answers how the todo ends:

* it **returns**: the todo is completed. A ``str`` is the attempt's summary, ``None`` nothing, a
  :class:`Done` summary, result and artifact together, anything else the JSON ``result``;
* it **raises** :class:`Release`: the lease is given back (the todo is pending again, no attempt
  spent on a failure);
* it **raises** :class:`Fail`: the todo is failed with that summary, result and error object;
* it **raises** anything else: the todo is failed with the exception's error object
  (:func:`error_of`: its class, message and traceback, kept on the attempt) and its one-line form
  as the summary (retried with backoff, dead-lettered at its ``max_attempts``).

How it runs (docs/clients.md has the whole of it):

* ``concurrency`` slots per queue, each a thread that long-polls ``claim_next`` (fenced by
  default, presenting ``capabilities`` when given) and calls the handler in that thread;
* the report carries ``next`` (the same claim's arguments), so a busy slot makes **one request
  per job**: it sends the result and gets its next todo in the same answer;
* one heartbeat thread extends every running lease each ``lease/3`` seconds; a lost lease (the
  todo was reaped or taken over, or ran past its run-time limit: the server refuses the heartbeat,
  and one is sent as the claim's ``timeout_seconds`` passes) sets :attr:`Job.lost` and the
  handler's outcome is dropped;
* the server being out of reach (connection errors, ``503 unavailable`` with its ``Retry-After``,
  5xx) is ridden out: claims back off (1 s doubling to 30 s), heartbeats are tried again within
  the lease, a finished todo's report is tried for two minutes, again **without** ``next`` (a
  report whose answer was lost may have claimed a todo nobody here knows of; it comes back when
  that lease lapses), and a ``conflict`` after such a retry means the first one landed;
* claims a team admin has paused (``423 paused``) are waited out: the worker says so once, its
  reports still land, and each slot claims again every 15 s until the claims are resumed;
* :meth:`Worker.stop` (SIGINT/SIGTERM under :meth:`run_until_signalled`) claims nothing more, sets
  :attr:`Job.stopping`, waits ``grace`` seconds for running handlers, then gives their leases back.

Work must be idempotent, as with any at-least-once queue: a todo whose report never got through
comes back when its lease lapses.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from board_client import _sync_client, errors, tracing, types
from board_client.errors import BoardError, LeaseLost, Paused, ServerError, Unavailable

logger = logging.getLogger("board_client.worker")

SUMMARY_MAX_BYTES = 2048
# What the server keeps of an error object (it cuts the rest): sending no more keeps the request small.
ERROR_TYPE_MAX_BYTES = 200
ERROR_MESSAGE_MAX_BYTES = 4096
ERROR_TRACEBACK_MAX_BYTES = 64 * 1024
LONG_POLL_SECONDS = 30
BACKOFF_START = 1.0
BACKOFF_MAX = 30.0
REPORT_BACKOFF_MAX = 10.0  # a finished todo's report is retried more eagerly than a claim
REPORT_RETRY_SECONDS = 120.0  # past its lease a report can still land, if nobody took the todo
HEARTBEAT_RETRY_SECONDS = 2.0
# While the endpoint's claims are paused, each slot claims again this often (a long poll answers
# ``paused`` at once, so the wait is here).
PAUSED_RETRY_SECONDS = 15.0
# A refusal of the worker itself: retrying cannot help (a bad token, a verb or queue outside its
# scope, arguments the server rejects).
FATAL = (errors.Unauthorized, errors.Forbidden, errors.Invalid, errors.NotFound)

Handler = Callable[["Job"], Any]


def _beat_due(job: Job, now: float) -> bool:
    return job.next_beat <= now or (job.deadline is not None and job.deadline <= now)


def _next_look(job: Job) -> float:
    return job.next_beat if job.deadline is None else min(job.next_beat, job.deadline)


@dataclasses.dataclass(frozen=True)
class Done:
    """A handler's answer with more than a summary: all three are optional."""

    summary: str | None = None
    result: Any = None
    artifact: str | None = None


class Release(Exception):
    """Raised by a handler to give the todo back untouched (the message is the summary)."""


class Fail(Exception):
    """Raised by a handler to fail the todo with this summary (no traceback), ``result`` and
    ``error`` (an error object, ``{type, message, traceback}``)."""

    def __init__(self, summary: str, *, result: Any = None, error: types.ErrorReport | None = None):
        super().__init__(summary)
        self.summary = summary
        self.result = result
        self.error = error


class Job:
    """One claimed todo, as a handler sees it: the todo's fields, and two events to watch."""

    def __init__(self, claim: types.Claim, queue: str):
        self.claim = claim
        self.todo: types.Todo = claim["todo"]
        self.lease_token: str | None = claim.get("lease_token")
        self.queue = queue
        self.lost = threading.Event()  # the lease is gone: stop, the outcome will not be reported
        self.stopping = threading.Event()  # the worker is stopping: finish soon or be released
        self.next_beat = 0.0
        # The attempt's run-time limit (the todo's own, else its queue's default, as the claim
        # answered it), on this process's clock: a heartbeat is sent when it passes, which the
        # server refuses (the lease is lost) and the handler is told to stop.
        limit = claim.get("timeout_seconds") or self.todo.get("timeout_seconds")
        self.deadline: float | None = time.monotonic() + limit if limit else None
        self.abandoned = False  # released after the grace period: the handler's outcome is dropped

    @property
    def id(self) -> str:
        return self.todo["id"]

    @property
    def title(self) -> str:
        return self.todo["title"]

    @property
    def payload(self) -> Any:
        return self.todo.get("payload")

    @property
    def kind(self) -> str | None:
        return self.todo.get("kind")

    @property
    def attempt(self) -> int:
        return self.todo["attempt"]

    @property
    def cancelled(self) -> bool:
        """The lease was lost or the worker is stopping."""
        return self.lost.is_set() or self.stopping.is_set()

    def __repr__(self) -> str:
        return f"Job({self.id!r}, {self.title!r}, attempt {self.attempt})"


@dataclasses.dataclass
class Outcome:
    """What became of one claimed todo (for logs and tests)."""

    todo_id: str
    verdict: str  # completed | failed | released | lost
    summary: str | None = None


def described(exc: BoardError) -> str:
    """An error for the log, with the HTTP status when there was an answer."""
    return f"HTTP {exc.status} {exc}" if exc.status else str(exc)


def default_claimant() -> str:
    return f"worker@{socket.gethostname()}:{os.getpid()}"


def retry_delay(backoff: float, retry_after: float | None, *, ceiling: float = BACKOFF_MAX) -> float:
    """The current backoff, or the server's Retry-After if it asks for longer, but never more than
    ``ceiling``: a huge Retry-After must not park a worker."""
    return min(ceiling, max(backoff, retry_after or 0.0))


def utf8_tail(text: str, max_bytes: int = SUMMARY_MAX_BYTES) -> str:
    raw = text.encode("utf-8", errors="replace")[-max_bytes:]
    return raw.decode("utf-8", errors="ignore")


def utf8_head(text: str, max_bytes: int) -> str:
    raw = text.encode("utf-8", errors="replace")[:max_bytes]
    return raw.decode("utf-8", errors="ignore")


def qualified_name(cls: type) -> str:
    """``module.Class`` (``KeyError`` for a builtin), as an error object's type."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def one_line(exc: BaseException) -> str:
    """The exception's one-line form, ``KeyError: 'user'``: the last line of its traceback."""
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


def error_of(exc: BaseException) -> types.ErrorReport:
    """The error object a failure reports: the exception's class (qualified name), its message
    and its traceback (the last 64 KB: the end names the failure), each cut to what the server keeps."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    return {
        "type": utf8_head(qualified_name(type(exc)), ERROR_TYPE_MAX_BYTES),
        "message": utf8_head(str(exc), ERROR_MESSAGE_MAX_BYTES),
        "traceback": utf8_tail(text, ERROR_TRACEBACK_MAX_BYTES),
    }


class Worker:
    """Claims todos from the queues it has handlers for and runs them; see the module's docstring."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        concurrency: int = 1,
        lease: int = 60,
        fence: bool = True,
        capabilities: list[str] | tuple[str, ...] = (),
        claimant: str | None = None,
        wait_seconds: float = LONG_POLL_SECONDS,
        grace: float = 30.0,
        client: _sync_client.Client | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if lease < 1:
            raise ValueError("lease must be at least 1 second")
        # The worker rides outages itself (above), so its client sends each call once.
        # (its long polls get their wait on top of the timeout: the client stretches it itself).
        self.client = client or _sync_client.Client(url, token, retries=0)
        self.concurrency = concurrency
        self.lease = lease
        self.fence = fence
        self.capabilities = list(capabilities)
        self.claimant = claimant or default_claimant()
        self.wait_seconds = wait_seconds
        self.grace = grace
        self.handlers: dict[str, tuple[Handler, int]] = {}
        self.outcomes: list[Outcome] = []
        self.fatal: BoardError | None = None
        self._stop = threading.Event()
        self._enough = threading.Event()  # max_todos handled: claim no more
        self._lock = threading.Lock()
        self._running: dict[str, Job] = {}  # handlers running now, by todo id
        self._busy: set[threading.Thread] = set()  # slots between a claim and its report's answer
        self._remaining: int | None = None
        self._paused = False  # the last claim met paused claims (logged once until they resume)
        self.paused_retry_seconds = PAUSED_RETRY_SECONDS

    # --- registering ---------------------------------------------------------------------------

    def handler(self, queue: str, *, concurrency: int | None = None) -> Callable[[Handler], Handler]:
        """Decorate the function that works the todos of ``queue``."""

        def register(function: Handler) -> Handler:
            self.add_handler(queue, function, concurrency=concurrency)
            return function

        return register

    def add_handler(self, queue: str, function: Handler, *, concurrency: int | None = None) -> None:
        if inspect.iscoroutinefunction(function):
            raise TypeError(f"{function.__name__} is a coroutine function: give Worker a plain function")
        if queue in self.handlers:
            raise ValueError(f"queue {queue!r} already has a handler")
        self.handlers[queue] = (function, concurrency or self.concurrency)

    # --- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Claim nothing more; running handlers see :attr:`Job.stopping` and get ``grace`` seconds."""
        self._stop.set()
        with self._lock:
            for job in self._running.values():
                job.stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run_until_signalled(self, *, max_todos: int | None = None) -> int:
        """:meth:`run`, stopping cleanly on SIGINT or SIGTERM (from the main thread)."""
        previous = {sig: signal.signal(sig, lambda *_: self.stop()) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            return self.run(max_todos=max_todos)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def run(self, *, max_todos: int | None = None) -> int:
        """Work until stopped, or until ``max_todos`` todos were handled. Returns the exit status:
        0, or 1 when the server refused the worker itself (:attr:`fatal` says why)."""
        if not self.handlers:
            raise ValueError("no handlers: register one with @worker.handler(queue)")
        self._remaining = max_todos
        slots = [
            threading.Thread(target=self._slot, args=(queue,), name=f"board-worker-{queue}-{n}", daemon=True)
            for queue, (_, count) in self.handlers.items()
            for n in range(count)
        ]
        beats = threading.Thread(target=self._heartbeats, name="board-worker-heartbeats", daemon=True)
        beats.start()
        for slot in slots:
            slot.start()
        while not self._stop.wait(0.2):
            if self._enough.is_set() and not self._running:
                break
            if not any(slot.is_alive() for slot in slots):
                break
        self._stop.set()
        self._wind_down(slots)
        return 1 if self.fatal is not None else 0

    def _wind_down(self, slots: list[threading.Thread]) -> None:
        """Give running handlers ``grace`` seconds, then release what they still hold. Slots in a
        long poll hold nothing: they end with the process (a claim on the way out is given back)."""
        deadline = time.monotonic() + self.grace
        while self._running and time.monotonic() < deadline:
            time.sleep(0.05)
        with self._lock:
            left = list(self._running.values())
        for job in left:
            job.abandoned = True
            job.lost.set()
            self._report(
                "release", job, summary=f"worker stopped; the handler was still running after {self.grace:g} s"
            )
            self._record(job, "released", "worker stopped")
        deadline = time.monotonic() + 5
        for slot in list(self._busy):  # those finishing a report after a handler returned in time
            slot.join(timeout=max(0.0, deadline - time.monotonic()))

    # --- one slot: claim, run, report (and claim) -----------------------------------------------

    def _claim_args(self, queue: str) -> types.NextClaim:
        return {
            "queue": queue,
            "lease_ttl_seconds": self.lease,
            "require_fence": self.fence,
            "claimant": self.claimant,
            "capabilities": self.capabilities or None,
            "wait_seconds": self.wait_seconds,
        }

    def _taking_work(self) -> bool:
        return not self._stop.is_set() and not self._enough.is_set()

    def _slot(self, queue: str) -> None:
        backoff = BACKOFF_START
        claim: types.Claim | None = None
        while True:
            if claim is None:
                if not self._taking_work():
                    return
                try:
                    claim = self.client.claim_next(**self._claim_args(queue))
                except Paused as exc:
                    self._wait_out_pause(exc)
                    continue
                except BoardError as exc:
                    if not self._refused(exc, "claim"):
                        delay = retry_delay(backoff, getattr(exc, "retry_after", None))
                        logger.warning("cannot claim from %s (%s); retrying in %.0f s", queue, described(exc), delay)
                        self._stop.wait(delay)
                        backoff = min(backoff * 2, BACKOFF_MAX)
                    continue
                backoff = BACKOFF_START
                self._claims_resumed()
                if claim is None:
                    continue
            me = threading.current_thread()
            self._busy.add(me)
            try:
                claim = self._work(Job(claim, queue))
            finally:
                self._busy.discard(me)

    def _wait_out_pause(self, exc: Paused) -> None:
        """The endpoint's claims are paused: say so once (not once per slot and try), then claim
        again every :attr:`paused_retry_seconds` until they are resumed or the worker stops."""
        with self._lock:
            first, self._paused = not self._paused, True
        if first:
            logger.warning(
                "claims paused (%s); waiting, claiming again every %.0f s", exc.message, self.paused_retry_seconds
            )
        self._stop.wait(self.paused_retry_seconds)

    def _claims_resumed(self) -> None:
        with self._lock:
            was, self._paused = self._paused, False
        if was:
            logger.info("claims resumed; taking work again")

    def _refused(self, exc: BoardError, what: str) -> bool:
        """A refusal of the worker itself stops it (True); anything else is worth retrying."""
        if isinstance(exc, FATAL):
            logger.error("the server refused this worker's %s: %s", what, exc)
            self.fatal = exc
            self.stop()
            return True
        return False

    def _work(self, job: Job) -> types.Claim | None:
        """Run one job and report it; the next claim when the report carried ``next``."""
        if not self._taking_work():
            self._report("release", job, summary="worker stopping before the handler started")
            self._record(job, "released", "stopping")
            return None
        function = self.handlers[job.queue][0]
        logger.info("claimed %s (attempt %s): %s", job.id, job.attempt, job.title)
        job.next_beat = time.monotonic() + self._beat_interval()
        with self._lock:
            self._running[job.id] = job
        # The handler and its report in one span, a child of the todo's trace context: the
        # report's traceparent header is this span's (docs/clients.md, "Traces").
        with tracing.processing(job.todo, job.queue) as span:
            try:
                verb, fields, verdict = self._outcome(function, job)
            finally:
                with self._lock:
                    self._running.pop(job.id, None)
            self._count_one()
            if verb == "fail":
                tracing.failed(span, fields.get("summary"))
            if job.lost.is_set():
                if not job.abandoned:
                    self._record(job, "lost")
                return None
            following = self._report(verb, job, then_claim=verb != "release", **fields)
        self._record(job, verdict, fields.get("summary"))
        return following

    def _outcome(self, function: Handler, job: Job) -> tuple[str, dict[str, Any], str]:
        """The report a handler's return (or exception) makes: verb, fields, verdict."""
        try:
            answer = function(job)
        except Release as exc:
            return "release", {"summary": utf8_tail(str(exc) or "released by its handler")}, "released"
        except Fail as exc:
            return "fail", {"summary": utf8_tail(exc.summary), "result": exc.result, "error": exc.error}, "failed"
        except Exception as exc:  # noqa: BLE001 -- any error of the work fails the todo, with its traceback
            if not job.lost.is_set():
                logger.warning("%s failed: %s: %s", job.id, type(exc).__name__, exc)
            fields = {
                "summary": utf8_tail(one_line(exc)),
                "result": {"error": type(exc).__name__},
                "error": error_of(exc),
            }
            return "fail", fields, "failed"
        if isinstance(answer, Done):
            fields = {"summary": answer.summary, "result": answer.result, "artifact": answer.artifact}
        elif isinstance(answer, str):
            fields = {"summary": utf8_tail(answer)}
        else:
            fields = {"result": answer}
        return "complete", fields, "completed"

    def _count_one(self) -> None:
        with self._lock:
            if self._remaining is not None:
                self._remaining -= 1
                if self._remaining <= 0:
                    self._enough.set()

    def _record(self, job: Job, verdict: str, summary: str | None = None) -> None:
        with self._lock:
            self.outcomes.append(Outcome(job.id, verdict, summary))

    # --- reporting -------------------------------------------------------------------------------

    def _report(self, verb: str, job: Job, *, then_claim: bool = False, **fields: Any) -> types.Claim | None:
        """Send ``complete``/``fail``/``release`` (with ``next`` while taking work); retry while the
        server is out of reach, for :data:`REPORT_RETRY_SECONDS`, without ``next``."""
        give_up = time.monotonic() + max(self.lease, REPORT_RETRY_SECONDS)
        backoff = BACKOFF_START
        retried = False
        send = getattr(self.client, verb)
        while True:
            following = self._claim_args(job.queue) if then_claim and not retried and self._taking_work() else None
            extra: dict[str, Any] = {"next": following} if following is not None else {}
            try:
                answer = send(job.id, lease_token=job.lease_token, **fields, **extra)
            except BoardError as exc:
                if isinstance(exc, LeaseLost):
                    if retried:
                        logger.info("%s %s: the first try had landed, or the lease lapsed", verb, job.id)
                    else:
                        logger.error("could not %s %s: %s", verb, job.id, exc)
                    return None
                if isinstance(exc, errors.Invalid) and verb != "release" and (fields.keys() - {"summary"}):
                    # The handler's answer itself was refused (a result too large, an artifact that
                    # is not a URL): fail the todo saying so, rather than leave it to its lease.
                    logger.error("the server refused the answer for %s (%s); failing it", job.id, exc)
                    verb, send = "fail", self.client.fail
                    fields = {"summary": utf8_tail(f"the handler's answer was refused: {exc}")}
                    continue
                if not isinstance(exc, Unavailable | ServerError):
                    logger.error("could not %s %s: %s", verb, job.id, exc)
                    return None
                delay = retry_delay(backoff, exc.retry_after if isinstance(exc, Unavailable) else None,
                                    ceiling=REPORT_BACKOFF_MAX)  # fmt: skip
                if time.monotonic() + delay > give_up:
                    logger.error("could not %s %s (%s); its lease will lapse and the todo come back", verb, job.id, exc)
                    return None
                logger.warning("could not %s %s (%s); retrying in %.0f s", verb, job.id, described(exc), delay)
                time.sleep(delay)
                backoff = min(backoff * 2, REPORT_BACKOFF_MAX)
                retried = True
                continue
            logger.info("%s %s", {"complete": "completed", "fail": "failed", "release": "released"}[verb], job.id)
            if following is None or verb == "release":
                return None
            return self._following(answer, job.queue)

    def _following(self, answer: Any, queue: str) -> types.Claim | None:
        """The claim a report's ``next`` made; its error stops the worker when it refuses the
        worker itself, else the slot claims again on its own."""
        try:
            return self.client.next_of(answer)
        except Paused:
            return None  # the slot's own claim meets the pause and waits it out
        except BoardError as exc:
            if not self._refused(exc, "claim"):
                logger.warning("the claim after a report on %s failed (%s); claiming again", queue, exc)
            return None

    # --- heartbeats ------------------------------------------------------------------------------

    def _beat_interval(self) -> float:
        return max(self.lease / 3, 0.5)

    def _heartbeats(self) -> None:
        """Extend each running lease every lease/3 s, and once a job's run-time limit passes; a lost
        lease (reaped, taken over, or past the limit) marks its job lost."""
        while True:
            now = time.monotonic()
            with self._lock:
                due = [job for job in self._running.values() if _beat_due(job, now) and not job.lost.is_set()]
                soonest = min((_next_look(job) for job in self._running.values()), default=now + 0.5)
            for job in due:
                self._beat(job)
            if due:
                continue
            time.sleep(min(max(soonest - now, 0.02), 0.5))

    def _beat(self, job: Job) -> None:
        interval = self._beat_interval()
        if job.deadline is not None and job.deadline <= time.monotonic():
            # past the run-time limit: this beat is the check; if the server still took it (its
            # clock is a little behind), look again shortly
            job.deadline += 0.5
        try:
            self.client.heartbeat(job.id, lease_ttl_seconds=self.lease, lease_token=job.lease_token)
            job.next_beat = time.monotonic() + interval
        except (Unavailable, ServerError) as exc:
            # Again soon: the server's Retry-After, else 2 s; never later than the regular
            # interval, so the lease is not let go for the sake of a hint.
            retry_after = exc.retry_after if isinstance(exc, Unavailable) else None
            delay = min(retry_after or HEARTBEAT_RETRY_SECONDS, interval)
            logger.warning("heartbeat for %s failed (%s); retrying in %.0f s", job.id, described(exc), delay)
            job.next_beat = time.monotonic() + delay
        except BoardError as exc:
            logger.error("lost the lease on %s (%s); its outcome will be dropped", job.id, exc)
            job.lost.set()

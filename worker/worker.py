"""A worker that drains a queue through the HTTP API by running a command per todo.

``manage.py work`` is the command-line face of :class:`Worker`. It needs nothing but the API's
URL and a token (it can run on another machine), and it is built to be left running:

* each slot long-polls ``claim_next`` (``wait_seconds=30``), fenced by default, presenting the
  worker's capabilities (``--capability``, repeated) when it has any: it then takes only todos
  whose ``requires`` they cover; with none, the endpoint's default capabilities apply;
* the command gets the payload as JSON on stdin and ``BOARD_TODO_ID``, ``BOARD_TODO_TITLE``,
  ``BOARD_TODO_QUEUE``, ``BOARD_TODO_KIND`` and ``BOARD_TODO_ATTEMPT`` in its environment;
* while it runs, the lease is extended every ``lease/3`` seconds; a lost lease (the todo was
  reaped or taken over) kills the command and drops the todo without reporting;
* exit 0 completes the todo with the tail of stdout (≤ 2048 bytes) as the attempt summary; any
  other exit fails it with the tail of stderr;
* connection errors and 5xx answers are retried with backoff (1 s doubling to 30 s, and never
  sooner than the server's ``Retry-After``, which a ``503 unavailable`` carries while its database
  is unreachable): the server or its database may restart under a running command; heartbeats
  keep being tried at least once per lease/3 (sooner on Retry-After) and resume when it is back;
* :meth:`Worker.stop` (SIGINT/SIGTERM in the command) stops taking work, terminates running
  commands and releases their leases with a summary saying so.

A todo claimed just as the process dies (or whose report never got through) is not lost: its
lease lapses and the reaper makes it claimable again. Work must therefore be idempotent, as with
any at-least-once queue.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

import httpx

logger = logging.getLogger("worker.worker")

SUMMARY_MAX_BYTES = 2048
LONG_POLL_SECONDS = 30
BACKOFF_START = 1.0
BACKOFF_MAX = 30.0
REPORT_BACKOFF_MAX = 10.0  # a finished todo's report is retried more eagerly than a claim
HEARTBEAT_RETRY_SECONDS = 2.0
TERMINATE_GRACE_SECONDS = 5.0
TRANSIENT_STATUSES = {500, 502, 503, 504}
# How long a finished todo's report is retried while the server is unreachable. Past its lease the
# report can still land (nobody may have taken the todo over yet); if it was, it answers conflict.
REPORT_RETRY_SECONDS = 120.0


class ApiError(Exception):
    """The API refused a call (4xx, or a 5xx after which retrying is pointless)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class Unreachable(Exception):
    """The server could not be reached, or answered 5xx: worth retrying later, no sooner than
    ``retry_after`` seconds when the server said so (``Retry-After``)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The ``Retry-After`` of an answer, in seconds (the delay form; a date or garbage is ignored)."""
    raw = response.headers.get("Retry-After", "").strip()
    if not raw.isdigit():
        return None
    return float(raw)


def retry_delay(backoff: float, retry_after: float | None, *, ceiling: float = BACKOFF_MAX) -> float:
    """How long to wait before trying again: the current backoff, or the server's Retry-After if it
    asks for longer, but never more than ``ceiling`` (a huge Retry-After must not park a worker)."""
    return min(ceiling, max(backoff, retry_after or 0.0))


@dataclass(frozen=True)
class WorkerConfig:
    url: str
    token: str
    queue: str
    command: tuple[str, ...]
    lease: int = 60
    fence: bool = True
    concurrency: int = 1
    wait_seconds: int = LONG_POLL_SECONDS
    claimant: str | None = None
    capabilities: tuple[str, ...] = ()  # presented on each claim; empty: the endpoint's defaults


class ApiClient:
    """The agent API over HTTP: ``call(verb, body)`` → the answer's JSON, or an exception."""

    def __init__(self, url: str, token: str):
        self.base = url.rstrip("/")
        if not self.base.endswith("/api/v1"):
            self.base += "/api/v1"
        self.headers = {"Authorization": f"Bearer {token}", "User-Agent": "board-worker/1"}
        self._local = threading.local()

    def _client(self) -> httpx.Client:
        # One client per thread: a long poll in one slot never blocks another slot's heartbeat.
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = httpx.Client(headers=self.headers)
        return client

    def call(self, verb: str, body: dict, *, timeout: float = 15.0) -> dict:
        try:
            response = self._client().post(f"{self.base}/{verb}", json=body, timeout=timeout)
        except httpx.TransportError as exc:
            raise Unreachable(f"{verb}: {exc.__class__.__name__}: {exc}") from exc
        if response.status_code in TRANSIENT_STATUSES:
            raise Unreachable(
                f"{verb}: HTTP {response.status_code}{_error_code(response)}", retry_after=retry_after_seconds(response)
            )
        try:
            data = response.json()
        except ValueError:
            raise Unreachable(f"{verb}: HTTP {response.status_code} with a body that is not JSON") from None
        if response.status_code >= 400:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise ApiError(response.status_code, error.get("code", "unknown"), error.get("message", ""))
        return data

    def close(self) -> None:
        client = getattr(self._local, "client", None)
        if client is not None:
            client.close()


def _error_code(response: httpx.Response) -> str:
    """`` unavailable`` (the API's error code) for the log, when the answer has one."""
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""
    return f" {code}" if isinstance(code, str) else ""


class Tail:
    """The last bytes a stream wrote (a bounded buffer, filled by a reader thread)."""

    def __init__(self, keep: int = SUMMARY_MAX_BYTES * 4):
        self.keep = keep
        self.data = b""
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.data = (self.data + chunk)[-self.keep :]

    def text(self, max_bytes: int = SUMMARY_MAX_BYTES) -> str:
        """The tail as text, at most ``max_bytes`` of UTF-8 (a character cut in half is dropped)."""
        with self._lock:
            raw = self.data[-max_bytes:]
        text = raw.decode("utf-8", errors="ignore")
        while len(text.encode("utf-8")) > max_bytes:  # replacement characters can grow it
            text = text[1:]
        return text


def _pump(stream, tail: Tail) -> None:
    try:
        for chunk in iter(lambda: stream.read1(4096), b""):
            tail.feed(chunk)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


def _feed_stdin(stream, data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the command does not read its stdin; that is its business
    finally:
        try:
            stream.close()
        except OSError:
            pass


@dataclass
class Outcome:
    """What happened to one claimed todo (for logs and tests)."""

    todo_id: str
    verdict: str  # completed | failed | released | lost
    exit_code: int | None = None


@dataclass
class Worker:
    config: WorkerConfig
    client: ApiClient | None = None  # the API client to use (``api``); by default one for config.url
    outcomes: list[Outcome] = field(default_factory=list)

    def __post_init__(self):
        self.api = self.client or ApiClient(self.config.url, self.config.token)
        self._stop = threading.Event()  # stop now: terminate commands, release their leases
        self._enough = threading.Event()  # max_todos reached: finish what runs, claim no more
        self._fatal: ApiError | None = None
        self._children: dict[int, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._busy: set[threading.Thread] = set()

    # --- control -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop taking work; running commands are terminated and their leases released."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self, *, max_todos: int | None = None) -> int:
        """Work until stopped, or until ``max_todos`` todos were handled (running ones finish
        normally then). Returns the exit status: 0, or 1 when the API refused the worker itself
        (bad token, verb or queue outside its scope)."""
        self._remaining = max_todos
        slots = [
            threading.Thread(target=self._slot, name=f"board-worker-{n}", daemon=True)
            for n in range(max(1, self.config.concurrency))
        ]
        for slot in slots:
            slot.start()
        while not self._stop.wait(0.2):
            if self._enough.is_set() and not self._busy:
                break
            if not any(slot.is_alive() for slot in slots):
                break
        # Slots in a long poll hold no todo: they are left to end with the process (one that
        # claims on the way out gives the todo straight back). Slots holding a todo terminate
        # their command and release the lease, which can take a few seconds.
        deadline = time.monotonic() + TERMINATE_GRACE_SECONDS + 20
        for slot in slots:
            while slot.is_alive() and slot in self._busy and time.monotonic() < deadline:
                slot.join(0.1)
        return 1 if self._fatal is not None else 0

    # --- one slot: claim, run, report, repeat --------------------------------------------------

    def _count_one(self) -> None:
        """Count a handled todo; once ``max_todos`` have been handled, claim no more."""
        with self._lock:
            if self._remaining is not None:
                self._remaining -= 1
                if self._remaining <= 0:
                    self._enough.set()

    def _taking_work(self) -> bool:
        return not self.stopping and not self._enough.is_set()

    def _slot(self) -> None:
        backoff = BACKOFF_START
        while self._taking_work():
            try:
                answer = self.api.call(
                    "claim_next",
                    {
                        "queue": self.config.queue,
                        "lease_ttl_seconds": self.config.lease,
                        "require_fence": self.config.fence,
                        "claimant": self.config.claimant,
                        "wait_seconds": self.config.wait_seconds,
                        "capabilities": list(self.config.capabilities) or None,
                    },
                    timeout=self.config.wait_seconds + 15,
                )
            except Unreachable as exc:
                delay = retry_delay(backoff, exc.retry_after)
                logger.warning("cannot claim (%s); retrying in %.0f s", exc, delay)
                self._stop.wait(delay)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            except ApiError as exc:
                logger.error("the server refused this worker: %s", exc)
                self._fatal = exc
                self._stop.set()
                return
            backoff = BACKOFF_START
            if answer.get("empty"):
                continue
            me = threading.current_thread()
            self._busy.add(me)
            try:
                self._handle(answer)
            finally:
                self._busy.discard(me)
            self._count_one()

    def _handle(self, claim: dict) -> None:
        todo = claim["todo"]
        token = claim.get("lease_token")
        if not self._taking_work():
            # Claimed just as we were told to stop: give it straight back.
            self._report("release", todo, token, summary="worker stopping before the command started")
            self.outcomes.append(Outcome(todo["id"], "released"))
            return
        logger.info("claimed %s (attempt %s): %s", todo["id"], todo["attempt"], todo["title"])
        child, out, err, pumps = self._start(todo)
        lost = stopped = False
        interval = max(self.config.lease / 3, 0.5)
        next_beat = time.monotonic() + interval
        try:
            while child.poll() is None:
                if self.stopping and not stopped:
                    stopped = True
                    self._terminate(child)
                    continue
                if time.monotonic() >= next_beat:
                    try:
                        self.api.call("heartbeat", self._lease(todo, token, lease_ttl_seconds=self.config.lease))
                        next_beat = time.monotonic() + interval
                    except Unreachable as exc:
                        # Again soon: the server's Retry-After, else 2 s; never later than the
                        # regular interval, so the lease is not let go for the sake of a hint.
                        delay = min(exc.retry_after or HEARTBEAT_RETRY_SECONDS, interval)
                        logger.warning("heartbeat for %s failed (%s); retrying in %.0f s", todo["id"], exc, delay)
                        next_beat = time.monotonic() + delay
                    except ApiError as exc:
                        logger.error("lost the lease on %s (%s); stopping its command", todo["id"], exc)
                        lost = True
                        self._terminate(child)
                        break
                try:
                    child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            code = child.wait()
        finally:
            with self._lock:
                self._children.pop(child.pid, None)
            for pump in pumps:
                pump.join(timeout=5)
        if lost:
            self.outcomes.append(Outcome(todo["id"], "lost", code))
            return
        if stopped:
            self._report(
                "release", todo, token, summary=f"worker stopped by a signal; command terminated (exit {code})"
            )
            self.outcomes.append(Outcome(todo["id"], "released", code))
        elif code == 0:
            self._report("complete", todo, token, summary=out.text(), result={"exit_code": 0})
            self.outcomes.append(Outcome(todo["id"], "completed", code))
        else:
            self._report("fail", todo, token, summary=err.text() or f"exit {code}", result={"exit_code": code})
            self.outcomes.append(Outcome(todo["id"], "failed", code))

    def _start(self, todo: dict):
        env = dict(os.environ)
        env.update(
            BOARD_TODO_ID=todo["id"],
            BOARD_TODO_TITLE=todo["title"],
            BOARD_TODO_QUEUE=todo["queue"],
            BOARD_TODO_KIND=todo.get("kind") or "",
            BOARD_TODO_ATTEMPT=str(todo["attempt"]),
        )
        env.pop("BOARD_TOKEN", None)  # the command gets the todo, not the worker's credential
        child = subprocess.Popen(
            list(self.config.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # a Ctrl-C at the terminal reaches the worker, which decides
        )
        with self._lock:
            self._children[child.pid] = child
        out, err = Tail(), Tail()
        payload = json.dumps(todo.get("payload")).encode()
        pumps = [
            threading.Thread(target=_feed_stdin, args=(child.stdin, payload), daemon=True),
            threading.Thread(target=_pump, args=(child.stdout, out), daemon=True),
            threading.Thread(target=_pump, args=(child.stderr, err), daemon=True),
        ]
        for pump in pumps:
            pump.start()
        return child, out, err, pumps

    def _terminate(self, child: subprocess.Popen) -> None:
        """SIGTERM the command's process group, SIGKILL it after a grace period."""
        try:
            os.killpg(child.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        try:
            child.wait(timeout=TERMINATE_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _lease(self, todo: dict, token: str | None, **extra) -> dict:
        body = {"id": todo["id"], **extra}
        if token is not None:
            body["lease_token"] = token
        return body

    def _report(self, verb: str, todo: dict, token: str | None, **fields) -> None:
        """Send ``complete``/``fail``/``release``, retrying while the server is unreachable (for
        :data:`REPORT_RETRY_SECONDS`; then the lapsed lease leaves the todo to the reaper)."""
        give_up = time.monotonic() + max(self.config.lease, REPORT_RETRY_SECONDS)
        backoff = BACKOFF_START
        retried = False
        body = self._lease(todo, token, **fields)
        while True:
            try:
                self.api.call(verb, body)
                logger.info(
                    "%s %s", {"complete": "completed", "fail": "failed", "release": "released"}[verb], todo["id"]
                )
                return
            except ApiError as exc:
                if retried and exc.code == "conflict":
                    logger.info(
                        "%s %s: already applied before the connection dropped, or the lease lapsed", verb, todo["id"]
                    )
                else:
                    logger.error("could not %s %s: %s", verb, todo["id"], exc)
                return
            except Unreachable as exc:
                delay = retry_delay(backoff, exc.retry_after, ceiling=REPORT_BACKOFF_MAX)
                if time.monotonic() + delay > give_up:
                    logger.error(
                        "could not %s %s (%s); its lease will lapse and the reaper will requeue it",
                        verb,
                        todo["id"],
                        exc,
                    )
                    return
                logger.warning("could not %s %s (%s); retrying in %.0f s", verb, todo["id"], exc, delay)
                time.sleep(delay)
                backoff = min(backoff * 2, REPORT_BACKOFF_MAX)
                retried = True

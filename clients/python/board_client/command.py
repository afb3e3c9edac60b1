"""A handler that runs a command per todo: what ``board-worker -- ./job.sh`` does.

* the command gets the payload as JSON on stdin and ``BOARD_TODO_ID``, ``BOARD_TODO_TITLE``,
  ``BOARD_TODO_QUEUE``, ``BOARD_TODO_KIND`` and ``BOARD_TODO_ATTEMPT`` in its environment (not
  ``BOARD_TOKEN``: the command gets the todo, not the worker's credential);
* exit 0 completes the todo with the tail of stdout (≤ 2048 bytes) as the summary; any other exit
  fails it with the tail of stderr as the summary and an error object (:func:`exit_error`): the
  exit status as its type, stderr's last line as its message, stderr's last 64 KB as its traceback;
* a lost lease or a stopping worker terminates it (SIGTERM to its process group, SIGKILL after a
  grace period); stopping gives the lease back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Sequence

from board_client import types
from board_client.worker import (
    ERROR_MESSAGE_MAX_BYTES,
    ERROR_TRACEBACK_MAX_BYTES,
    SUMMARY_MAX_BYTES,
    Done,
    Fail,
    Job,
    Release,
    utf8_head,
)

TERMINATE_GRACE_SECONDS = 5.0


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


def exit_status(code: int) -> str:
    """``exit 3``, or ``signal 9`` for a command a signal ended (Popen's negative code)."""
    return f"signal {-code}" if code < 0 else f"exit {code}"


def exit_error(code: int, stderr: Tail) -> types.ErrorReport:
    """A failed command's error object: its exit status, stderr's last line, stderr's last 64 KB."""
    text = stderr.text(ERROR_TRACEBACK_MAX_BYTES).rstrip()
    lines = [line for line in text.splitlines() if line.strip()]
    message = lines[-1].strip() if lines else exit_status(code)
    error: types.ErrorReport = {"type": exit_status(code), "message": utf8_head(message, ERROR_MESSAGE_MAX_BYTES)}
    if text:
        error["traceback"] = text
    return error


def command_handler(argv: Sequence[str]):
    """The handler running ``argv`` for each todo."""
    command = list(argv)
    if not command:
        raise ValueError("give the command to run")

    def run_command(job: Job) -> Done:
        child, out, err, pumps = _start(command, job)
        stopped = False
        try:
            while True:
                try:
                    child.wait(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if job.lost.is_set() or job.stopping.is_set():
                    stopped = True
                    _terminate(child)
                    break
            code = child.wait()
        finally:
            for pump in pumps:
                pump.join(timeout=5)
        if stopped:
            raise Release(f"worker stopped by a signal; command terminated (exit {code})")
        if code != 0:
            raise Fail(err.text() or exit_status(code), result={"exit_code": code}, error=exit_error(code, err))
        return Done(summary=out.text(), result={"exit_code": 0})

    run_command.__name__ = f"command {' '.join(command)}"
    return run_command


def _start(command: list[str], job: Job):
    env = dict(os.environ)
    env.update(
        BOARD_TODO_ID=job.id,
        BOARD_TODO_TITLE=job.title,
        BOARD_TODO_QUEUE=job.todo["queue"],
        BOARD_TODO_KIND=job.kind or "",
        BOARD_TODO_ATTEMPT=str(job.attempt),
    )
    env.pop("BOARD_TOKEN", None)
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # a Ctrl-C at the terminal reaches the worker, which decides
    )
    out, err = Tail(), Tail(keep=ERROR_TRACEBACK_MAX_BYTES)  # stderr's end is the error's traceback
    payload = json.dumps(job.payload).encode()
    pumps = [
        threading.Thread(target=_feed_stdin, args=(child.stdin, payload), daemon=True),
        threading.Thread(target=_pump, args=(child.stdout, out), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, err), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    return child, out, err, pumps


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


def _terminate(child: subprocess.Popen) -> None:
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

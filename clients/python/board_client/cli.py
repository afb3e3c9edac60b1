"""``board-worker``: drain a queue with a command per todo, or with a Python handler.

    board-worker --url https://board.example --token bd_… --queue builds \\
        [--lease 60] [--no-fence] [--concurrency 2] [--capability gpu …] -- ./build.sh --fast
    board-worker --queue builds --handler mypackage.jobs:build

``--url`` and ``--token`` default to ``BOARD_URL`` and ``BOARD_TOKEN``. SIGINT/SIGTERM stop it
cleanly: running commands are terminated and their leases released. Exit status 0, 1 when the
server refused the worker itself, 2 for bad options.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from board_client.command import command_handler
from board_client.worker import LONG_POLL_SECONDS, Worker, default_claimant

CONCURRENCY_MAX = 64


DESCRIPTION = "Claim todos from a queue of a Board and run a command (payload on stdin) or a Python handler for each."


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="board-worker", description=DESCRIPTION)
    add_options(p)
    return p


def add_options(p: argparse.ArgumentParser) -> None:
    """The options, on ``board-worker``'s parser or on ``manage.py work``'s."""
    p.add_argument("--url", default=os.environ.get("BOARD_URL"), help="the Board's base URL (env BOARD_URL)")
    p.add_argument("--token", default=os.environ.get("BOARD_TOKEN"), help="the endpoint's token (env BOARD_TOKEN)")
    p.add_argument("--queue", required=True)
    p.add_argument("--lease", type=int, default=60, help="lease seconds, extended every lease/3 (default 60)")
    p.add_argument("--fence", action=argparse.BooleanOptionalAction, default=True, help="fence the lease (default on)")
    p.add_argument("--concurrency", type=int, default=1, help=f"todos run at once (1 to {CONCURRENCY_MAX}, default 1)")
    p.add_argument("--claimant", help="label in the attempt history (default: worker@host:pid)")
    p.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="LABEL",
        help="a capability this worker presents (repeat for several): it takes only todos whose requires are "
        "all among them; with none, the endpoint's default capabilities apply",
    )
    p.add_argument("--handler", metavar="MODULE:FUNCTION", help="a Python handler to call instead of a command")
    p.add_argument("--max-todos", type=int, help="stop after handling this many todos")
    p.add_argument("--grace", type=float, default=30.0, help="seconds a running handler gets once stopped")
    p.add_argument("--wait", type=int, default=LONG_POLL_SECONDS, help=argparse.SUPPRESS)
    p.add_argument("--verbose", action="store_true", help="log each todo claimed and reported")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command and its arguments")


class OptionError(Exception):
    """Bad options: the message names the option."""


def worker_from(options: argparse.Namespace) -> Worker:
    """The worker the options describe, or :class:`OptionError` naming the bad one."""
    command = list(options.cmd)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(options.handler):
        raise OptionError("give either a command after -- (e.g. -- ./job.sh) or --handler MODULE:FUNCTION")
    if not options.url:
        raise OptionError("--url (or BOARD_URL) is required")
    if not options.token:
        raise OptionError("--token (or BOARD_TOKEN) is required")
    if options.lease < 1:
        raise OptionError("--lease must be at least 1 second")
    if not 1 <= options.concurrency <= CONCURRENCY_MAX:
        raise OptionError(f"--concurrency must be 1 to {CONCURRENCY_MAX}")
    if not 0 <= options.wait <= LONG_POLL_SECONDS:
        raise OptionError(f"--wait must be 0 to {LONG_POLL_SECONDS} seconds")
    if options.max_todos is not None and options.max_todos < 1:
        raise OptionError("--max-todos must be at least 1")
    if options.grace < 0:
        raise OptionError("--grace must not be negative")
    handler = command_handler(command) if command else load_handler(options.handler)
    worker = Worker(
        options.url,
        options.token,
        concurrency=options.concurrency,
        lease=options.lease,
        fence=options.fence,
        capabilities=options.capability,
        claimant=options.claimant or default_claimant(),
        wait_seconds=options.wait,
        grace=options.grace,
    )
    worker.add_handler(options.queue, handler)
    return worker


def load_handler(spec: str):
    """``package.module:function`` → the function."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise OptionError(f"--handler must be MODULE:FUNCTION, not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise OptionError(f"--handler: cannot import {module_name} ({exc})") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise OptionError(f"--handler: {module_name} has no function {name}")
    return function


def main(argv: Sequence[str] | None = None) -> int:
    options = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if options.verbose else logging.WARNING, format="%(asctime)s %(message)s")
    try:
        worker = worker_from(options)
    except (OptionError, ValueError, TypeError) as exc:
        print(f"board-worker: {exc}", file=sys.stderr)
        return 2
    return work(worker, options)


def work(worker: Worker, options: argparse.Namespace) -> int:
    """Run the worker until a signal (or ``--max-todos``); its exit status."""
    able = f" with capabilities {', '.join(options.capability)}" if options.capability else ""
    print(f"working on {options.queue} at {options.url}{able} (Ctrl-C to stop)", file=sys.stderr)
    status = worker.run_until_signalled(max_todos=options.max_todos)
    if status:
        print(f"board-worker: the server refused this worker: {worker.fatal}", file=sys.stderr)
    else:
        print("worker stopped", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())

"""``manage.py work``: drain a queue by running a command for each todo (see ``worker/worker.py``).

    manage.py work --url https://board.example --token bd_… --queue builds \\
        [--lease 60] [--no-fence] [--concurrency 2] [--capability gpu --capability region:eu] \\
        -- ./build.sh --fast

``--url`` and ``--token`` default to ``BOARD_URL`` and ``BOARD_TOKEN``. Only HTTP is used, so the
worker can run anywhere that reaches the Board. SIGINT/SIGTERM stop it cleanly: running commands
are terminated and their leases released.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket

from django.core.management.base import BaseCommand, CommandError

from todos.core.errors import Invalid
from todos.core.store import inputs
from worker.worker import Worker, WorkerConfig


class Command(BaseCommand):
    help = "Claim todos from a queue over the HTTP API and run a command for each (payload on stdin)."
    requires_system_checks: list = []  # a worker touches no database: only the API
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--url", default=os.environ.get("BOARD_URL"), help="the Board's base URL (env BOARD_URL)")
        parser.add_argument(
            "--token", default=os.environ.get("BOARD_TOKEN"), help="the endpoint's token (env BOARD_TOKEN)"
        )
        parser.add_argument("--queue", required=True)
        parser.add_argument("--lease", type=int, default=60, help="lease seconds, extended every lease/3 (default 60)")
        parser.add_argument(
            "--fence", action=argparse.BooleanOptionalAction, default=True, help="fence the lease (default on)"
        )
        parser.add_argument("--concurrency", type=int, default=1, help="todos run at once (default 1)")
        parser.add_argument("--claimant", help="label in the attempt history (default: worker@host:pid)")
        parser.add_argument(
            "--capability",
            action="append",
            default=[],
            metavar="LABEL",
            help="a capability this worker presents (repeat for several): it takes only todos whose "
            "requires are all among them; with none, the endpoint's default capabilities apply",
        )
        parser.add_argument("--wait", type=int, default=30, help=argparse.SUPPRESS)
        parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command and its arguments")

    def handle(self, *args, **options):
        command = list(options["cmd"])
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            raise CommandError("give the command to run after --, e.g. manage.py work --queue q -- ./job.sh")
        if not options["url"]:
            raise CommandError("--url (or BOARD_URL) is required")
        if not options["token"]:
            raise CommandError("--token (or BOARD_TOKEN) is required")
        if not 1 <= options["lease"] <= inputs.LEASE_TTL_MAX:
            raise CommandError(f"--lease must be 1 to {inputs.LEASE_TTL_MAX} seconds")
        if not 1 <= options["concurrency"] <= 64:
            raise CommandError("--concurrency must be 1 to 64")
        if not 0 <= options["wait"] <= 30:
            raise CommandError("--wait must be 0 to 30 seconds")
        try:
            capabilities = inputs.capability_labels("--capability", options["capability"])
        except Invalid as exc:
            raise CommandError(f"{exc.field}: {exc.problem}") from None
        config = WorkerConfig(
            url=options["url"],
            token=options["token"],
            queue=options["queue"],
            command=tuple(command),
            lease=options["lease"],
            fence=options["fence"],
            concurrency=options["concurrency"],
            wait_seconds=options["wait"],
            claimant=options["claimant"] or f"worker@{socket.gethostname()}:{os.getpid()}",
            capabilities=tuple(capabilities),
        )
        logging.getLogger("worker.worker").setLevel(logging.INFO)
        worker = Worker(config)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: worker.stop())
        able = f" with capabilities {', '.join(capabilities)}" if capabilities else ""
        self.stderr.write(f"working on {config.queue} at {config.url}{able} (Ctrl-C to stop)")
        status = worker.run()
        if status:
            raise CommandError("the server refused this worker (see the log above)", returncode=status)
        self.stderr.write("worker stopped")

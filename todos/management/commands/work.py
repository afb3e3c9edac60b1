"""``manage.py work``: ``board-worker`` (``board_client.cli``) from the server's checkout, with the
server's own rules for the options it can check before the first claim.

    manage.py work --url https://board.example --token bd_… --queue builds -- ./build.sh --fast
"""

from __future__ import annotations

import argparse
import logging

from board_client import cli
from django.core.management.base import BaseCommand, CommandError

from todos.core.errors import Invalid
from todos.core.store import inputs


class Command(BaseCommand):
    help = cli.DESCRIPTION
    requires_system_checks: list = []  # a worker touches no database: only the API
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_options(parser)

    def handle(self, *args, **options):
        if options["lease"] > inputs.LEASE_TTL_MAX:
            raise CommandError(f"--lease must be 1 to {inputs.LEASE_TTL_MAX} seconds")
        try:
            inputs.capability_labels("--capability", options["capability"])
        except Invalid as exc:
            raise CommandError(f"{exc.field}: {exc.problem}") from None
        namespace = argparse.Namespace(**options)
        try:
            worker = cli.worker_from(namespace)
        except (cli.OptionError, ValueError, TypeError) as exc:
            raise CommandError(str(exc)) from None
        logging.getLogger("board_client.worker").setLevel(logging.INFO)
        status = cli.work(worker, namespace)
        if status:
            raise CommandError("the server refused this worker (see the log above)", returncode=status)

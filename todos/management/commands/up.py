"""``manage.py up``: everything Board needs, in one command.

Starts (or connects to) PostgreSQL, applies the schema, makes sure a site admin exists, starts the
background loops and serves Board (HTTP, the agent API and websockets) with daphne. ``--demo``
adds a demo team with endpoints, a few hundred todos in every state, and simulated agents that
keep the queue moving.
"""

from __future__ import annotations

import os
import secrets
import threading

import daphne.server  # noqa: F401  (installs Twisted's asyncio reactor before anything imports Twisted)
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError


MIGRATE_LOCK = 0x626F617264  # "board"


class Command(BaseCommand):
    help = "Start PostgreSQL (embedded unless DATABASE_URL is set), migrate, and serve Board with its background loops."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("BOARD_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("BOARD_PORT", "8000")))
        parser.add_argument("--demo", action="store_true", help="Add demo data and simulated agents.")
        parser.add_argument("--no-loops", action="store_true", help="Do not run the background loops in this process.")

    def handle(self, *args, host: str, port: int, demo: bool, no_loops: bool, **options):
        if not 0 < port < 65536:
            raise CommandError(f"--port must be 1..65535, got {port}")
        self.stdout.write("Board: preparing the database …")
        self._migrate()
        admin = self._ensure_admin()

        stop = threading.Event()
        agents = None
        if demo:
            from todos.demo import SimulatedAgents, seed

            scopes = seed(admin)
            agents = SimulatedAgents(scopes)
            agents.start()
            self.stdout.write("Demo: team 'demo', 4 endpoints, simulated agents running.")
        if not no_loops:
            from todos.loops import start_loops

            start_loops(stop)

        self.stdout.write(self.style.SUCCESS(f"Board is up: http://{host}:{port}/  (Ctrl-C to stop)"))
        try:
            self._serve(host, port)
        finally:
            stop.set()
            if agents is not None:
                agents.close()
            from todos.db import reset_pools

            reset_pools()

    def _migrate(self) -> None:
        """Apply the schema under an advisory lock: several Board processes may start at once."""
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
            try:
                call_command("migrate", interactive=False, verbosity=0)
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])

    def _ensure_admin(self):
        """A site admin to sign in with: from BOARD_ADMIN_USERNAME/PASSWORD, or generated and printed once."""
        User = get_user_model()
        username = os.environ.get("BOARD_ADMIN_USERNAME", "admin")
        password = os.environ.get("BOARD_ADMIN_PASSWORD")
        user = User.objects.filter(username=username).first()
        if user is None:
            generated = password is None
            password = password or secrets.token_urlsafe(12)
            user = User.objects.create_superuser(username=username, password=password, email="")
            self.stdout.write(self.style.WARNING(
                f"Created site admin '{username}'"
                + (f" with password: {password}   (shown once; change it under Account)" if generated else ".")
            ))
        elif password is not None and not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
            self.stdout.write(f"Site admin '{username}': password set from BOARD_ADMIN_PASSWORD.")
        return user

    def _serve(self, host: str, port: int) -> None:
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server

        from board.asgi import application

        Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            signal_handlers=True,
            verbosity=0,
            proxy_forwarded_address_header="X-Forwarded-For" if os.environ.get("BEHIND_HTTPS_PROXY") else None,
            proxy_forwarded_port_header="X-Forwarded-Port" if os.environ.get("BEHIND_HTTPS_PROXY") else None,
            proxy_forwarded_proto_header="X-Forwarded-Proto" if os.environ.get("BEHIND_HTTPS_PROXY") else None,
        ).run()

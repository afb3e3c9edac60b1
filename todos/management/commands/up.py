"""``manage.py up``: everything Board needs, in one command.

Starts (or connects to) PostgreSQL, applies the schema, makes sure a site admin exists, starts the
background loops and serves Board (HTTP, the agent API and websockets) with daphne. ``--demo``
adds a demo team with endpoints, a few hundred todos in every state, and simulated agents that
keep the queue moving.

The order matters to an operator running several processes, or a second one by mistake:

1. bind the port first, so a port in use ends the command at once with one line and status 1,
   before anything touches the database or says "up";
2. migrate and make sure the admin exists under one advisory lock, so N processes started at once
   on an empty database migrate once and create one admin;
3. listen and hand the listening socket to daphne; once it serves, start the loops (and demo
   agents) and announce.

Step 2 runs in a thread while the command's own thread runs the system checks and imports what
serving needs: PostgreSQL starting and the admin's password hashing run beside Python, so the two
overlap (docs/deployment.md, "Start-up", has the order and what each step costs).
"""

from __future__ import annotations

import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from importlib import import_module
from typing import Generic, NoReturn, TypeVar, cast

import psycopg
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

T = TypeVar("T")

MIGRATE_LOCK = 0x626F617264  # "board"
LISTEN_BACKLOG = 1024
# How long a stop waits for the loops' sweeps in progress, before closing the pools under them.
LOOPS_STOP_SECONDS = 5.0


class Command(BaseCommand):
    help = "Start PostgreSQL (embedded unless DATABASE_URL is set), migrate, and serve Board with its background loops."
    # The system checks run in handle, while the database is being prepared (and --skip-checks,
    # which Django adds only to commands it checks itself, is added below).
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--skip-checks", action="store_true", help="Skip the system checks.")
        parser.add_argument("--host", default=None, help="Interface to listen on (default: BOARD_HOST, 127.0.0.1).")
        parser.add_argument("--port", type=int, default=None, help="Port to listen on (default: BOARD_PORT, 8000).")
        parser.add_argument("--demo", action="store_true", help="Add demo data and simulated agents.")
        parser.add_argument("--no-loops", action="store_true", help="Do not run the background loops in this process.")

    def handle(
        self, *args, host: str | None, port: int | None, demo: bool, no_loops: bool, skip_checks: bool, **options
    ):
        host = str(host or settings.BOARD_HOST)
        port = int(settings.BOARD_PORT if port is None else port)
        if not 0 < port < 65536:
            raise CommandError(f"--port must be 1..65535, got {port}")
        # Until daphne installs its own handlers, SIGTERM ends the command like Ctrl-C does: through
        # the exit handlers, which stop the embedded PostgreSQL this process started.
        signal.signal(signal.SIGTERM, _exit_on_signal)

        listener = self._bind(host, port)
        self.stdout.write("Board: preparing the database …")
        preparing = InThread(self._prepare_database, name="board-prepare-database")
        # Meanwhile, what serving needs: daphne (which installs Twisted's asyncio reactor; nothing
        # imported Twisted before it), the checks (which import the URLs and views) and the routing.
        import_module("daphne.server")
        if not skip_checks:
            self.check()
        import_module("board.routing")

        try:
            admin, created = preparing.result()
        except psycopg.OperationalError as exc:
            # One line that names the server, not a traceback (the password is never in it).
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CommandError(
                f"cannot reach the database: {said}. Check DATABASE_URL, or unset it to use the embedded PostgreSQL."
            ) from None

        scopes = None
        if demo:
            from todos.ops.demo import seed

            scopes = seed(admin)
            from todos.ops.demo import DEMO_VIEWER, ensure_viewer_password

            viewer_password = ensure_viewer_password()
            if viewer_password:
                self.stdout.write(
                    f"Demo: sign in as '{DEMO_VIEWER}' with password '{viewer_password}' to see the viewer role."
                )
        # Starts this process's relay candidate: only once the schema it reads is there.
        from board.asgi import application

        self._listen(listener, host, port)

        stop = threading.Event()
        agents = None
        loops: list[threading.Thread] = []

        def serving() -> None:
            """Called by daphne once it serves the socket: start what can wait until then."""
            nonlocal agents, loops
            if not created and settings.BOARD_ADMIN_PASSWORD:
                threading.Thread(
                    target=self._sync_admin_password, args=(admin,), name="board-admin-password", daemon=True
                ).start()
            if demo:
                from todos.ops.demo import SimulatedAgents

                agents = SimulatedAgents(scopes or {})
                agents.start()
                self.stdout.write("Demo: team 'demo', 4 endpoints, simulated agents running.")
            if not no_loops:
                from todos.ops.loops import start_loops

                loops = start_loops(stop)
            banner = f"Board is up: http://{_display(host, port)}/  (Ctrl-C to stop)"
            # Django's Style sets its roles (SUCCESS, WARNING, …) with setattr: no attribute pyright can see
            self.stdout.write(self.style.SUCCESS(banner))  # pyright: ignore[reportAttributeAccessIssue]

        try:
            served = self._serve(listener, application, serving)
        finally:
            stop.set()
            _join(loops, timeout=LOOPS_STOP_SECONDS)
            if agents is not None:
                agents.close()
            from todos.core.db import reset_pools

            reset_pools()
        if not served:
            self._cannot_listen(host, port, "daphne could not adopt the socket")

    def _bind(self, host: str, port: int) -> socket.socket:
        """Reserve ``host:port`` before anything else happens; one line and status 1 if it is taken.

        The socket is bound but not yet listening: until the database is ready, a connection is
        refused (a load balancer tries another process) rather than accepted and left waiting.
        """
        try:
            family, kind, proto, _, address = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
            listener = socket.socket(family, kind, proto)
        except OSError as error:
            self._cannot_listen(host, port, error)
        try:
            # As Twisted does: a restart may bind over connections still in TIME_WAIT. (On Linux
            # this never lets two processes both listen on one port.)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(address)
        except OSError as error:
            listener.close()
            self._cannot_listen(host, port, error)
        return listener

    def _listen(self, listener: socket.socket, host: str, port: int) -> None:
        try:
            listener.listen(LISTEN_BACKLOG)
        except OSError as error:  # another process bound the port too and listened first
            listener.close()
            self._cannot_listen(host, port, error)

    def _cannot_listen(self, host: str, port: int, error) -> NoReturn:
        reason = getattr(error, "strerror", None) or str(error)
        self.stderr.write(f"Board: cannot listen on {_display(host, port)}: {reason[:1].lower()}{reason[1:]}")
        sys.exit(1)

    def _prepare_database(self):
        """Apply the schema and make sure the site admin exists, under one advisory lock; the
        admin and whether it was created now.

        Several Board processes may start at once on an empty database (``docker compose up
        --scale board=3``): the first migrates and creates the admin, the others wait for the lock
        and find both done.

        The lock is a session lock, held on a dedicated connection to the database itself
        (``BOARD_LISTEN_URL`` when ``DATABASE_URL`` names a transaction pooler, where a session
        lock could be taken on one server connection and released on another); the migrations
        run on Django's connection, one transaction each.
        """
        from todos.core.db import connect

        with connect(application_name="board-migrate-lock") as lock:
            lock.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
            try:
                if _migrations_pending():
                    call_command("migrate", interactive=False, verbosity=0)
                return self._ensure_admin()
            finally:
                lock.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])

    def _ensure_admin(self):
        """A site admin to sign in with: from BOARD_ADMIN_USERNAME/PASSWORD, or generated and printed
        once. Returns the admin and whether it was created now."""
        User = get_user_model()
        username = settings.BOARD_ADMIN_USERNAME
        user = User.objects.filter(username=username).first()
        if user is not None:
            return user, False
        password = settings.BOARD_ADMIN_PASSWORD or None
        generated = password is None
        password = password or secrets.token_urlsafe(12)
        user = User.objects.create_superuser(username=username, password=password, email="")
        self.stdout.write(
            # Django's Style sets its roles (SUCCESS, WARNING, …) with setattr: no attribute pyright can see
            self.style.WARNING(  # pyright: ignore[reportAttributeAccessIssue]
                f"Created site admin '{username}'"
                + (
                    f" with password: {password}   (shown once; change it with Change password, under your name)"
                    if generated
                    else "."
                )
            )
        )
        return user, True

    def _sync_admin_password(self, user) -> None:
        """Give an existing admin BOARD_ADMIN_PASSWORD if it is not already theirs.

        Run in a thread once Board serves: checking a password hashes it (PBKDF2, half a second of
        CPU and more on a busy machine), which a start need not wait for.
        """
        try:
            password = settings.BOARD_ADMIN_PASSWORD
            if not user.check_password(password):
                user.set_password(password)
                user.save(update_fields=["password"])
                self.stdout.write(f"Site admin '{user.get_username()}': password set from BOARD_ADMIN_PASSWORD.")
        finally:
            connections.close_all()

    def _serve(self, listener: socket.socket, application, serving: Callable[[], None]) -> bool:
        """Serve on the listening socket until stopped, calling ``serving`` once daphne serves it;
        False if daphne never listened on it."""
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server

        trust_proxy = settings.BEHIND_HTTPS_PROXY
        if listener.family == socket.AF_INET:
            # daphne adopts the descriptor (Twisted's "fd:" endpoint) and closes it: detach it from
            # the socket object so nothing closes it twice.
            endpoints = build_endpoint_description_strings(file_descriptor=listener.detach())
        else:
            # Twisted's "fd:" endpoint only takes IPv4 sockets (its address family cannot be given
            # in the description string): daphne binds an IPv6 address itself, the moment after
            # this process checked it could; if it loses that race, it fails and the command exits 1.
            host, port = listener.getsockname()[:2]
            listener.close()
            endpoints = build_endpoint_description_strings(host=host, port=port)
        server = Server(
            application=application,
            endpoints=endpoints,
            signal_handlers=True,
            ready_callable=serving,
            verbosity=0,
            proxy_forwarded_address_header="X-Forwarded-For" if trust_proxy else None,
            proxy_forwarded_port_header="X-Forwarded-Port" if trust_proxy else None,
            proxy_forwarded_proto_header="X-Forwarded-Proto" if trust_proxy else None,
        )
        server.run()
        return bool(server.listening_addresses)


class InThread(Generic[T]):
    """``work()`` in a daemon thread; :meth:`result` waits for it and returns what it returned or
    raises what it raised. Daemon, so a SIGTERM while it waits (for the migration lock, say) ends
    the process without waiting for it; its database connections are closed when it is done."""

    def __init__(self, work: Callable[[], T], *, name: str):
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread, raised there
            self._error = error
        finally:
            connections.close_all()

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(T, self._value)


def _migrations_pending() -> bool:
    """Whether a migration on disk is not applied yet. On a migrated database ``migrate`` would
    apply nothing, but still cost a start its own checks and the signals that re-create content
    types and permissions (twice as long as asking)."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _join(threads: list[threading.Thread], *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _exit_on_signal(signum, frame):
    raise SystemExit(128 + signum)


def _display(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

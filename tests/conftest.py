"""Test set-up: a real PostgreSQL for the whole run, clean tables between tests, and the
lifecycle invariant checked after every test that touched the database.

With neither ``DATABASE_URL`` nor ``BOARD_TEST_DATABASE_URL`` set, the run starts a throwaway
embedded PostgreSQL in a temporary directory (deleted at exit). ``BOARD_TEST_DATABASE_URL`` points
the tests (only) at another server; pytest-django creates and drops ``test_<name>`` there.
``BOARD_TEST_PGBOUNCER=1`` runs everything through a real PgBouncer in transaction mode started
for the run (``tests/support/pgbouncer.py``; docs/deployment.md, PgBouncer).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

from board.db import parse_database_url

# Fixtures and helpers every package may use, loaded once for the run (a conftest imported from
# another package would register its fixtures twice).
pytest_plugins = [
    "tests.support.live_server",
    "tests.support.board",
    "tests.support.endpoints",
    "tests.support.api",
]

# Everything a test can write; TRUNCATE … CASCADE in one statement (Django's own flush would
# refuse: the schema's tables reference auth_user and Django does not know them).
TABLES = (
    "audit_log, todo_attempts, todo_dependencies, todos, queue_pauses, endpoints, team_members, teams, "
    "change_log, todo_counts, todo_finished_minutes, concurrency_keys, todo_flow, todo_flow_totals, schedule_fires, "
    "schedules, person_preferences, saved_views, queue_settings, "
    "person_identities, oidc_role_mappings, oidc_memberships, "
    "rate_limits, "
    "auth_user_groups, auth_user_user_permissions, auth_user, django_session"
)


def pytest_configure(config):
    # One relay for the run (the ``relay`` fixture), polling briskly. Processes the tests start
    # inherit the environment: they stand as candidates only where a test says so (BOARD_RELAY=1),
    # so a test that stops the run's relay knows who relays.
    settings.BOARD_RELAY = False
    os.environ["BOARD_RELAY"] = "0"
    os.environ["BOARD_RELAY_IDLE_INTERVAL"] = "0.02"
    settings.BOARD_RELAY_IDLE_INTERVAL = 0.02
    test_url = os.environ.get("BOARD_TEST_DATABASE_URL")
    if test_url:
        target = settings.DATABASES["default"]
        target.update(parse_database_url(test_url))
        target["TEST"] = {"NAME": f"test_{target['NAME']}"}
    elif not settings.DATABASE_URL:
        root = Path(tempfile.mkdtemp(prefix="board-test-"))
        settings.BOARD_DATA_DIR = root / "pg"
        settings.BOARD_DATA_DIR_EPHEMERAL = True
        import atexit

        atexit.register(shutil.rmtree, root, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_console_error_in_any_browser(request):
    """Any console error (a CSP violation included) or uncaught exception on any page a browser
    fixture opened fails the test (tests/support/browser_watch.py), unless the test names it with
    ``@pytest.mark.console_allows(r"regex", ...)``."""
    from tests.support import browser_watch

    browser_watch.PROBLEMS.clear()
    yield
    allowed = [pattern for mark in request.node.iter_markers("console_allows") for pattern in mark.args]
    problems = browser_watch.unexpected(browser_watch.PROBLEMS, allowed)
    browser_watch.PROBLEMS.clear()
    assert problems == [], "the browser logged errors:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """PBKDF2 at full strength costs ~0.3 s per user; the tests need no strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker):
    """Create the test database once (migrations = the schema's SQL files), point the store's
    pools at it, and close them before it is dropped.

    Replaces pytest-django's fixture so the database exists for every test that asks for
    ``store_db``; tests never use ``transactional_db``, whose flush cannot truncate ``auth_user``
    (the schema's tables reference it).
    """
    from django.test.utils import setup_databases, teardown_databases

    from tests.support import pgbouncer
    from todos.core import db

    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, keepdb=False, aliases={"default"})
    db.reset_pools()
    routing = None
    if pgbouncer.run_through_pgbouncer_requested():
        reason = pgbouncer.missing_reason()
        if reason:
            pytest.exit(f"BOARD_TEST_PGBOUNCER=1: {reason}", returncode=4)
        routing = pgbouncer.route_through(db.conninfo())
    yield
    db.reset_pools()
    if routing is not None:
        pgbouncer.unroute(routing)
    with django_db_blocker.unblock():
        from django.db import connections

        connections.close_all()
        teardown_databases(config, verbosity=0)


class RelayControl:
    """The run's relay candidate. A test may stop it (to leave the relaying to a process it
    started, or to none) with :meth:`stopped`; it runs again afterwards."""

    def __init__(self):
        self.current = None

    def start(self):
        from todos.live.relay import Relay

        if self.current is None:
            self.current = Relay(name="pytest").start()
        return self.current

    def stop(self):
        if self.current is not None:
            self.current.stop()
            self.current = None

    @contextmanager
    def stopped(self):
        self.stop()
        try:
            yield
        finally:
            self.start()


@pytest.fixture(scope="session", autouse=True)
def relay(django_db_setup, django_db_blocker):
    """The change-log relay, running for the whole run as in a Board process: live tests see the
    store's changes reach the listener through it. Stopped before the database is dropped."""
    control = RelayControl()
    with django_db_blocker.unblock():
        control.start()
        yield control
        control.stop()


@contextmanager
def relay_paused(conn):
    """Hold every relay pass (they wait for the pass lock) while the block runs on ``conn``."""
    from todos.live.relay import PASS_LOCK

    conn.execute("SELECT pg_advisory_lock(%s)", (PASS_LOCK,))
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (PASS_LOCK,))


def broken_invariants() -> list[dict]:
    from tests.support.invariants import broken_counts, broken_dependencies, broken_lifecycle, broken_slots
    from todos.core import db

    with db.connect() as conn:
        return broken_lifecycle(conn) + broken_counts(conn) + broken_slots(conn) + broken_dependencies(conn)


@pytest.fixture
def store_db(django_db_setup, django_db_blocker):
    """A database every connection can see (no wrapping transaction: the store has its own
    pool), emptied after the test, with the lifecycle invariant checked first."""
    from django.db import connections

    from todos.core import db

    with django_db_blocker.unblock():
        yield
        broken = broken_invariants()
        with db.connect() as conn, relay_paused(conn):
            conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
            conn.execute("UPDATE relay_state SET counts_stale = false")
        connections.close_all()
    assert not broken, f"lifecycle or counts invariant broken after the test: {broken}"

"""The token cache (``todos/core/credential_cache.py``) on real servers and a real database.

A cached credential ends at once where the store changes it, in every listening process through
``board_credentials``, and within ``BOARD_TOKEN_CACHE_SECONDS`` where no notification arrives.
The servers of the cross-process tests trust an entry for a minute, so an answer that comes
sooner than that came from the notification, not from the entry growing old.

Whether a server answers from its cache is observed, never assumed: :func:`prove_cached` changes
the endpoint's lease behind the store's back (a raw UPDATE: no notification) and asks again; an
answer that did not see it came from the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from uuid import UUID

import httpx
import pytest

from tests import factories
from tests.support.api import run_async
from tests.support.live_server import ROOT, free_port, server_environment, start_server, stop_server
from todos.agents.api import auth, credential_watch
from todos.agents.api.errors import Unauthorized
from todos.core import db
from todos.core.credential_cache import CACHE, CREDENTIALS_CHANNEL, CredentialCache
from todos.core.db import execute
from todos.core.errors import Conflict
from todos.core.selectors.agent_api import Credential, credential_for
from todos.core.store import endpoints
from todos.core.store.endpoints import NOTIFY_MAX_ENDPOINTS
from todos.live import listener as live_listener
from todos.live.listener import get_listener

LONG_TTL = 60  # seconds: the cross-process servers' trust in an entry
PROMPTLY = 10.0  # seconds: "well under the TTL", with room for a busy machine
CREDENTIAL_SQL = credential_for(bytes(32)).sql
STAMP_SQL = endpoints.touch_last_seen(UUID(int=1)).sql


@pytest.fixture(scope="module")
def pair(django_db_setup):
    """Two Board processes on the test database that trust an entry for a minute."""
    servers = []
    try:
        for _ in range(2):
            servers.append(start_server(BOARD_TOKEN_CACHE_SECONDS=str(LONG_TTL)))
        clients = [httpx.Client(base_url=server.url, timeout=10) for server in servers]
        yield clients
        for client in clients:
            client.close()
    finally:
        for server in servers:
            stop_server(server)


def call(client: httpx.Client, token: str, verb: str = "list_todos", body: dict | None = None) -> httpx.Response:
    return client.post(f"/api/v1/{verb}", json=body or {}, headers={"Authorization": f"Bearer {token}"})


def lease_seen(client: httpx.Client, token: str) -> int | None:
    response = call(client, token, "get_default_lease")
    assert response.status_code == 200, response.text
    return response.json()["default_lease_ttl_seconds"]


def behind_the_stores_back(sql: str, params: tuple) -> None:
    """A raw write: nothing is logged and no process is told."""
    with db.connect() as conn:
        conn.execute(sql, params)  # type: ignore[arg-type]


def prove_cached(client: httpx.Client, token: str, endpoint_id) -> float:
    """Return once the server answers ``token`` from its cache, with the time the request whose
    read it keeps was sent (its entry is trusted at least until then plus its TTL)."""
    sent = time.monotonic()
    seen = lease_seen(client, token)
    for step in range(1, 50):
        behind_the_stores_back(
            "UPDATE endpoints SET default_lease_ttl_seconds = %s WHERE id = %s", (60 + step, endpoint_id)
        )
        asked = time.monotonic()
        now_seen = lease_seen(client, token)
        if now_seen == seen:
            return sent
        sent, seen = asked, now_seen  # it read the row (the listener's start forgets what came before)
    pytest.fail("the server never answered from its cache")


def refused_within(client: httpx.Client, token: str, seconds: float, verb: str = "list_todos") -> tuple[float, dict]:
    """Ask until the token is refused; return how long that took and the refusal."""
    started = time.monotonic()
    while True:
        response = call(client, token, verb)
        if response.status_code == 401:
            return time.monotonic() - started, response.json()["error"]
        assert response.status_code == 200, response.text
        if time.monotonic() - started > seconds:
            pytest.fail(f"still accepted {seconds:.0f} s later")
        time.sleep(0.01)


def manage(*args: str) -> str:
    """A third process: ``manage.py`` on the test database (it runs no listener)."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=server_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


# --- across processes -----------------------------------------------------------------------------


def test_a_revoke_ends_the_token_in_every_process_through_the_notification(pair, tenancy):
    token, endpoint_id = tenancy.worker_token, tenancy.worker.endpoint.id
    for client in pair:
        prove_cached(client, token, endpoint_id)
    manage("revoke", "worker")  # a third process, which caches nothing and listens to nothing
    for client in pair:
        took, error = refused_within(client, token, PROMPTLY)
        assert error["message"] == "this endpoint has been revoked", error
        assert took < PROMPTLY < LONG_TTL


def test_a_rotation_refuses_the_old_token_and_takes_the_new_one_at_once(pair, tenancy):
    token, endpoint_id = tenancy.worker_token, tenancy.worker.endpoint.id
    for client in pair:
        prove_cached(client, token, endpoint_id)
    rotated = execute(endpoints.rotate(None, endpoint_id))
    for client in pair:
        assert call(client, rotated.token).status_code == 200  # its very first request
        took, error = refused_within(client, token, PROMPTLY)
        assert error["message"] == "unknown bearer token", error
        assert call(client, rotated.token).status_code == 200


def test_a_scope_edit_takes_effect_in_every_process(pair, tenancy):
    token, endpoint_id = tenancy.worker_token, tenancy.worker.endpoint.id
    for client in pair:
        prove_cached(client, token, endpoint_id)
        assert call(client, token, "create_for", {"queue": "default", "title": "before"}).status_code == 201
    verbs = [verb for verb in endpoints.SCOPE_VERBS if verb != "list_todos"]
    execute(endpoints.set_scopes(None, endpoint_id, verbs=verbs, queues=["other"]))
    for client in pair:
        started = time.monotonic()
        while call(client, token, "list_todos").status_code != 403:
            assert time.monotonic() - started < PROMPTLY, "the old scopes are still in use"
            time.sleep(0.01)
        refused = call(client, token, "create_for", {"queue": "default", "title": "outside"})
        assert refused.status_code == 403, refused.text
        assert call(client, token, "create_for", {"queue": "other", "title": "inside"}).status_code == 201


def test_without_notifications_the_ttl_bounds_a_revoke(tenancy):
    """The server's listener cannot reach the database (its BOARD_LISTEN_URL names a closed port),
    so no notification arrives: the entry outlives the revoke, and only for the TTL."""
    ttl = 2.0
    server = start_server(
        BOARD_TOKEN_CACHE_SECONDS=str(int(ttl)), BOARD_LISTEN_URL=f"postgresql://127.0.0.1:{free_port()}/nowhere"
    )
    token, endpoint_id = tenancy.worker_token, tenancy.worker.endpoint.id
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            read_sent = prove_cached(client, token, endpoint_id)
            execute(endpoints.revoke(None, endpoint_id))
            revoked_at = time.monotonic()
            answer = call(client, token)
            if time.monotonic() < read_sent + ttl:  # else this machine was too slow to look
                assert answer.status_code == 200, "refused at once: the listener was not meant to hear it"
            _, error = refused_within(client, token, ttl + PROMPTLY)
            refused_at = time.monotonic()
            assert error["message"] == "this endpoint has been revoked", error
            # Trusted from before its read, which came before the revoke: gone by the TTL (plus a
            # poll's latency, on a busy machine), not by the revoke.
            assert refused_at <= read_sent + ttl + 3.0, f"refused {refused_at - revoked_at:.2f} s after the revoke"
    finally:
        stop_server(server)


def test_an_expiring_token_is_refused_at_its_expiry_not_the_ttls(pair, tenancy):
    lifetime = 4.0
    vended = factories.endpoint(tenancy.team, slug="brief", expires_at=datetime.now(UTC) + timedelta(seconds=lifetime))
    expires = time.monotonic() + lifetime
    prove_cached(pair[0], vended.token, vended.endpoint.id)
    took, error = refused_within(pair[0], vended.token, lifetime + PROMPTLY)
    assert error["message"] == "this endpoint's token has expired", error
    refused_at = time.monotonic()
    assert expires - 1.0 < refused_at < expires + 2.0  # its own expiry, a minute before the TTL's


def test_an_unknown_token_is_not_remembered(api, asgi_server, tenancy):
    stranger = "bd_" + secrets.token_urlsafe(32)
    assert "unknown bearer token" in api.error(stranger, "list_todos", {}, "unauthorized")
    behind_the_stores_back(
        "UPDATE endpoints SET credential_hash = %s WHERE id = %s",
        (hashlib.sha256(stranger.encode()).digest(), tenancy.worker.endpoint.id),
    )
    api.ok(stranger, "list_todos")  # refused a moment ago, taken now: the refusal was not kept
    vended = factories.endpoint(tenancy.team, slug="fresh")
    api.ok(vended.token, "list_todos")


# --- in this process ---------------------------------------------------------------------------------


class Statements:
    """Counts what ``authenticate`` sends to the database (the statements still run)."""

    def __init__(self, monkeypatch):
        self.sent: list[str] = []
        real = auth.aexecute

        async def counting(stmt, conn=None):
            self.sent.append(str(stmt.sql))
            return await real(stmt, conn)

        monkeypatch.setattr(auth, "aexecute", counting)

    def count(self, sql) -> int:
        return self.sent.count(str(sql))


async def listening() -> None:
    """This loop's listener is live (so that going live forgets nothing later)."""
    assert await get_listener().wait_connected(10)


@pytest.mark.parametrize("ttl", [5, 0])
def test_a_cache_hit_reads_nothing(store_db, tenancy, monkeypatch, settings, ttl):
    settings.BOARD_TOKEN_CACHE_SECONDS = ttl
    statements = Statements(monkeypatch)
    header = f"Bearer {tenancy.worker_token}"

    async def scenario():
        await listening()
        return [await auth.authenticate(header) for _ in range(50)]

    credentials = run_async(scenario)
    assert {c.endpoint_id for c in credentials} == {tenancy.worker.endpoint.id}
    assert statements.count(CREDENTIAL_SQL) == (1 if ttl else 50)
    assert statements.count(STAMP_SQL) == 1


def test_last_seen_is_stamped_at_most_once_a_minute_without_asking(store_db, tenancy, monkeypatch, settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    statements = Statements(monkeypatch)
    header = f"Bearer {tenancy.worker_token}"
    endpoint_id = tenancy.worker.endpoint.id

    def last_seen():
        with db.connect() as conn:
            row = conn.execute("SELECT last_seen_at FROM endpoints WHERE id = %s", (endpoint_id,)).fetchone()
            return row["last_seen_at"]

    def backdate():
        behind_the_stores_back(
            "UPDATE endpoints SET last_seen_at = last_seen_at - interval '2 minutes' WHERE id = %s", (endpoint_id,)
        )

    async def scenario():
        await listening()
        for _ in range(10):
            await auth.authenticate(header)
        first = last_seen()
        backdate()
        for _ in range(10):
            await auth.authenticate(header)  # the entry says the next stamp is a minute away
        unchanged = last_seen()
        entry = CACHE.get(digest_of(tenancy.worker_token), time.monotonic())
        assert entry is not None
        entry.stamp_due -= 60  # a minute passes for this process
        for _ in range(10):
            await auth.authenticate(header)
        return first, unchanged, last_seen()

    first, unchanged, later = run_async(scenario)
    assert first is not None and unchanged == first - timedelta(minutes=2)
    assert later > first
    assert statements.count(STAMP_SQL) == 2
    assert statements.count(CREDENTIAL_SQL) == 1


@pytest.mark.parametrize("where", ["here", "elsewhere"])
def test_a_lookup_that_read_the_old_row_does_not_put_it_back(store_db, tenancy, monkeypatch, settings, where):
    """A lookup reads the endpoint while it is active; the revoke commits and is forgotten (here:
    by the store's statement in this process; elsewhere: by ``manage.py revoke`` in another process,
    through this process's listener) before the lookup stores what it read. It must not store it:
    the next request is refused."""
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    read, resume = threading.Event(), threading.Event()
    real = auth.aexecute

    async def pausing(stmt, conn=None):
        rows = await real(stmt, conn)
        if stmt.sql == CREDENTIAL_SQL and not read.is_set():
            read.set()
            assert await asyncio.to_thread(resume.wait, 60)
        return rows

    monkeypatch.setattr(auth, "aexecute", pausing)
    header = f"Bearer {tenancy.worker_token}"
    outcome: dict = {}

    async def scenario():
        await listening()
        outcome["in_flight"] = await auth.authenticate(header)  # read before the revoke: answered
        try:
            outcome["next"] = await auth.authenticate(header)
        except Unauthorized as refused:
            outcome["next"] = refused.message

    thread = threading.Thread(target=run_async, args=(scenario,))
    thread.start()
    try:
        assert read.wait(30), "the lookup never read"
        before = CACHE.generation
        if where == "here":
            execute(endpoints.revoke(None, tenancy.worker.endpoint.id))
        else:
            manage("revoke", "worker")
            started = time.monotonic()
            while CACHE.generation == before:  # the listener's thread forgets it
                assert time.monotonic() - started < PROMPTLY, "the notification never arrived"
                time.sleep(0.01)
        assert CACHE.generation > before
    finally:
        resume.set()
        thread.join(60)
    assert isinstance(outcome["in_flight"], Credential)
    assert outcome["next"] == "this endpoint has been revoked"


def digest_of(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@pytest.mark.parametrize(
    "change",
    [
        lambda ep: endpoints.set_scopes(None, ep, verbs=["list_todos"], queues=["default"]),
        lambda ep: endpoints.set_default_lease(None, ep, 600),
        lambda ep: endpoints.set_capabilities(None, ep, ["gpu"]),
        lambda ep: endpoints.rotate(None, ep),
        lambda ep: endpoints.revoke(None, ep),
    ],
    ids=["scopes", "lease", "capabilities", "rotate", "revoke"],
)
def test_the_process_that_changes_an_endpoint_forgets_it_at_once(store_db, tenancy, settings, change):
    """No listener runs here once the scenario's loop is gone: the statement itself forgets."""
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    header, digest = f"Bearer {tenancy.worker_token}", digest_of(tenancy.worker_token)

    async def scenario():
        await listening()
        await auth.authenticate(header)

    run_async(scenario)
    assert not [loop for loop in live_listener._listeners if not loop.is_closed()], "a listener still runs"
    assert CACHE.get(digest, time.monotonic()) is not None
    execute(change(tenancy.worker.endpoint.id))
    assert CACHE.get(digest, time.monotonic()) is None


def test_a_listener_that_reconnects_forgets_everything(store_db, tenancy, settings):
    """Notifications sent while the listener was down are lost: back, it forgets what was cached."""
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    header, digest = f"Bearer {tenancy.worker_token}", digest_of(tenancy.worker_token)

    async def scenario():
        await listening()
        listener = get_listener()
        await auth.authenticate(header)
        cached = CACHE.get(digest, time.monotonic()) is not None
        recoveries = listener.reconnects
        with db.connect() as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
        while listener.reconnects == recoveries:
            await asyncio.sleep(0.01)
        return cached, CACHE.get(digest, time.monotonic()) is None

    cached, forgotten = run_async(lambda: asyncio.wait_for(scenario(), 30))
    assert cached and forgotten


def test_a_change_notifies_once_and_a_refused_one_not_at_all(tenancy):
    def notes(conn) -> list[dict]:
        conn.execute("SELECT 1")  # a round trip: what was sent before it has arrived
        return [json.loads(n.payload) for n in conn.notifies(timeout=0.5) if n.channel == CREDENTIALS_CHANNEL]

    endpoint_id = tenancy.worker.endpoint.id
    with db.connect() as conn:
        conn.execute(f"LISTEN {CREDENTIALS_CHANNEL}")
        execute(endpoints.revoke(None, endpoint_id))
        assert notes(conn) == [{"endpoints": [str(endpoint_id)]}]
        with pytest.raises(Conflict):
            execute(endpoints.revoke(None, endpoint_id))
        assert notes(conn) == []
        many = [factories.endpoint(tenancy.team).endpoint.id for _ in range(NOTIFY_MAX_ENDPOINTS + 1)]
        behind_the_stores_back("UPDATE endpoints SET expires_at = now() WHERE id = ANY(%s)", (many,))
        assert len(execute(endpoints.expire_due(NOTIFY_MAX_ENDPOINTS + 1))) == NOTIFY_MAX_ENDPOINTS + 1
        assert notes(conn) == [{"endpoints": None}]  # too many to name: every process forgets all


def test_the_watch_forgets_what_a_notification_names(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    mine, other = credential(), credential()
    CACHE.remember(b"mine", mine, generation=CACHE.generation, read_at=time.monotonic())
    CACHE.remember(b"other", other, generation=CACHE.generation, read_at=time.monotonic())
    credential_watch.changed({"endpoints": [str(mine.endpoint_id)]})
    assert CACHE.get(b"mine", time.monotonic()) is None
    assert CACHE.get(b"other", time.monotonic()) is not None
    credential_watch.changed({"endpoints": None})
    assert CACHE.get(b"other", time.monotonic()) is None


# --- the cache itself ------------------------------------------------------------------------------


def credential(endpoint_id=None, **fields) -> Credential:
    values = {
        "endpoint_id": endpoint_id or UUID(int=secrets.randbits(64)),
        "team_id": UUID(int=7),
        "slug": "s",
        "scope_verbs": (),
        "scope_queues": (),
        "default_lease_ttl_seconds": None,
        "revoked": False,
        "expired": False,
        "stamp_in": 30.0,
    }
    values.update(fields)
    return Credential(**values)


def test_the_cache_is_bounded_and_drops_the_least_recently_used(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    cache = CredentialCache(max_entries=3)
    for n in range(3):
        cache.remember(bytes([n]), credential(), generation=cache.generation, read_at=0.0)
    assert cache.get(bytes([0]), 1.0) is not None  # used: the oldest is now 1
    cache.remember(bytes([3]), credential(), generation=cache.generation, read_at=0.0)
    assert len(cache) == 3
    assert cache.get(bytes([1]), 1.0) is None
    assert all(cache.get(bytes([n]), 1.0) is not None for n in (0, 2, 3))


def test_an_entry_is_trusted_for_the_ttl_from_before_its_read(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 5
    cache = CredentialCache()
    cache.remember(b"d", credential(), generation=cache.generation, read_at=100.0)
    assert cache.get(b"d", 104.9) is not None
    assert cache.get(b"d", 105.0) is None
    assert len(cache) == 0


def test_an_expiry_is_kept_as_the_time_left_when_read(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    cache = CredentialCache()
    entry = cache.remember(b"d", credential(expires_in=2.5), generation=cache.generation, read_at=100.0)
    assert not entry.expired(102.4)
    assert entry.expired(102.5)
    assert not cache.remember(b"e", credential(), generation=cache.generation, read_at=100.0).expired(10**9)


def test_forget_drops_the_endpoints_entries_and_stops_lookups_in_flight(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 60
    cache = CredentialCache()
    mine, other = credential(), credential()
    cache.remember(b"old", mine, generation=cache.generation, read_at=0.0)
    cache.remember(b"o", other, generation=cache.generation, read_at=0.0)
    in_flight = cache.generation
    assert cache.forget([str(mine.endpoint_id), "not-a-uuid"]) == 1
    assert cache.get(b"old", 1.0) is None and cache.get(b"o", 1.0) is not None
    cache.remember(b"old", mine, generation=in_flight, read_at=0.0)  # read before the forget
    assert cache.get(b"old", 1.0) is None
    cache.remember(b"old", mine, generation=cache.generation, read_at=0.0)  # read after it
    assert cache.get(b"old", 1.0) is not None
    cache.clear()
    assert len(cache) == 0


def test_a_ttl_of_zero_remembers_nothing(settings):
    settings.BOARD_TOKEN_CACHE_SECONDS = 0
    cache = CredentialCache()
    entry = cache.remember(b"d", credential(), generation=cache.generation, read_at=0.0)
    assert entry.credential.slug == "s"
    assert len(cache) == 0

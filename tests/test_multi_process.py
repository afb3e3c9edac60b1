"""Several Board processes on one PostgreSQL, as a scaled-out deployment runs them: two daphne
servers (A and B), one loops process (``manage.py reaper``) and a round-robin proxy in front
(``tests/support/round_robin_proxy.py``, no sticky sessions).

What must hold (docs/deployment.md):

* a browser whose live socket is on one process sees, without a reload, what an agent does
  through the agent API of the other;
* a bulk job started through A is followed on B, outlives A (SIGKILLed mid-job) and finishes with
  every todo changed exactly once;
* the change-log relay fails over when the process holding it is SIGKILLed: another process takes
  over within a few seconds and the surviving server's browser keeps receiving changes.

The processes live for the module (starting daphne costs seconds on a small machine); a test that
kills one gets it restarted, on the same port, by the next test's ``cluster`` fixture.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests import factories
from tests.board.test_bulk import audits_per_todo, insert_dead_letters, states
from tests.support.browser_watch import watched
from tests.support.live_server import ROOT, LiveServer, server_environment, start_server, stop_server
from tests.support.round_robin_proxy import RoundRobinProxy
from todos.core.db import connect
from todos.live.relay import RELAY_LOCK

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("store_db")]

CHROMIUM = "/usr/bin/chromium"
WAIT = 10_000  # ms: how long a change may take to reach a browser
FAILOVER_SECONDS = 5.0  # "within a few seconds": candidates retry every BOARD_RELAY_ELECTION_SECONDS (1 s)


# --- the processes ------------------------------------------------------------------------------


def start_loops() -> tuple[subprocess.Popen, Path]:
    log_path = Path(tempfile.mkstemp(prefix="board-loops-", suffix=".log")[1])
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "reaper"],
            cwd=ROOT,
            env=server_environment(BOARD_RELAY="1"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return process, log_path


def kill(process: subprocess.Popen) -> None:
    """SIGKILL: no shutdown code runs, the kernel closes its sockets (and PostgreSQL its sessions)."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(10)


@dataclass
class Cluster:
    """Two daphne servers (A, B) on fixed ports, a loops process, and the proxy in front."""

    servers: list[LiveServer] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    loops: subprocess.Popen | None = None
    loops_log: Path | None = None
    proxy: RoundRobinProxy | None = None

    @property
    def a(self) -> LiveServer:
        return self.servers[0]

    @property
    def b(self) -> LiveServer:
        return self.servers[1]

    def start(self) -> Cluster:
        for _ in range(2):
            self.servers.append(start_server(BOARD_RELAY="1"))  # every process a relay candidate, as deployed
            self.ports.append(int(self.servers[-1].url.rsplit(":", 1)[1]))
        self.loops, self.loops_log = start_loops()
        self.proxy = RoundRobinProxy([("127.0.0.1", port) for port in self.ports]).start()
        return self

    def revive(self) -> None:
        """Restart what a previous test killed, on the same ports (the proxy's upstreams)."""
        for i, server in enumerate(self.servers):
            if server.process.poll() is not None:
                stop_server(server)
                self.servers[i] = start_server(port=self.ports[i], BOARD_RELAY="1")
        if self.loops.poll() is not None:
            self.loops_log.unlink(missing_ok=True)
            self.loops, self.loops_log = start_loops()

    def logs(self) -> str:
        return "\n".join(
            [f"--- {s.url}\n{s.log()}" for s in self.servers]
            + [f"--- loops\n{self.loops_log.read_text(errors='replace')[-5000:]}"]
        )

    def stop(self) -> None:
        """Stop whatever was started (also after a start that failed half-way)."""
        if self.proxy is not None:
            self.proxy.stop()
        for server in self.servers:
            stop_server(server)
        if self.loops is not None and self.loops.poll() is None:
            self.loops.send_signal(signal.SIGCONT)  # in case a failed test left it paused
            self.loops.terminate()
            try:
                self.loops.wait(10)
            except subprocess.TimeoutExpired:
                kill(self.loops)
        if self.loops_log is not None:
            self.loops_log.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def running_cluster(django_db_setup):
    cluster = Cluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def allow_sync_orm_beside_playwright(monkeypatch):
    """Playwright's sync API keeps an event loop running in this thread, which Django's guard
    mistakes for async code; set up before ``store_db`` so it is undone after its teardown."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def cluster(running_cluster):
    running_cluster.revive()
    return running_cluster


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    from tests.live.test_browser import ARGS

    with playwright_api.sync_playwright() as p:
        browser = watched(p.chromium.launch(executable_path=CHROMIUM, args=ARGS))
        yield browser
        browser.close()


@dataclass
class Team:
    endpoint_id: object  # an agent endpoint of the team
    token: str  # its bearer token
    user: object  # an operator of the team


@pytest.fixture
def team(store_db):
    team = factories.team()
    vended = factories.endpoint(team)
    user = factories.user()
    factories.member(team, user, "operator")
    return Team(vended.endpoint.id, vended.token, user)


# --- helpers ----------------------------------------------------------------------------------------


def agent_call(server: LiveServer, token: str, verb: str, body: dict) -> dict:
    """One agent API call over HTTP to ``server`` (a fresh connection each time)."""
    response = httpx.post(
        f"{server.url}/api/v1/{verb}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert response.status_code in (200, 201), f"{verb} on {server.url}: {response.status_code} {response.text}"
    return response.json()


def open_live_page(chromium, base_url: str, user, path: str = "/todos/"):
    from playwright.sync_api import expect

    from tests.live.test_browser import open_page

    page = open_page(chromium, base_url, user, path)
    page.mouse.move(5, 5)  # the pointer away from the list: new rows go in at once
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=WAIT)
    return page


def relay_holder_pid() -> int | None:
    """The OS pid of the process relaying now, or None while nobody holds the relay lock.

    The lock (pg_locks) says whether someone holds it; ``relay_state.holder`` ("host:pid", written
    by each holder right after it is elected) says who. Just after an election the row may still
    name the previous holder for a moment: callers wait for the pid they expect.
    """
    with connect() as conn:
        row = conn.execute(
            """SELECT s.holder, EXISTS (
                   SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                     AND ((l.classid::bigint << 32) | l.objid::bigint) = %s) AS held
               FROM relay_state s""",
            (RELAY_LOCK,),
        ).fetchone()
    if not row["held"] or not row["holder"] or ":" not in row["holder"]:
        return None  # nobody, or the test run's own relay (named "pytest")
    return int(row["holder"].rsplit(":", 1)[1])


def paused(process: subprocess.Popen) -> None:
    """SIGSTOP ``process`` and wait until the kernel has stopped it (state T)."""
    os.kill(process.pid, signal.SIGSTOP)
    wait_for(
        lambda: Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T",
        5,
        f"process {process.pid} did not stop",
    )


def holder_among(pids) -> int | None:
    pid = relay_holder_pid()
    return pid if pid in pids else None


def wait_for(predicate, timeout: float, what, interval: float = 0.05):
    """``predicate()``'s first true value within ``timeout`` seconds; ``what`` (text, or a callable
    giving it, e.g. the servers' logs at the time of the failure) says what did not happen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what() if callable(what) else what}: not within {timeout} s")


# --- 1. a browser on one process, an agent on the other --------------------------------------------


@pytest.mark.browser
def test_a_browser_on_one_process_sees_live_what_an_agent_does_through_the_other(cluster, chromium, team):
    """The browser goes through the round-robin proxy (its page and its live socket may reach
    different processes); the agent calls the process that does not hold its live socket."""
    from playwright.sync_api import expect

    proxy = cluster.proxy
    seen = len(proxy.routed)
    page = open_live_page(chromium, proxy.url, team.user)
    sockets = proxy.websockets("/ws/board/", since=seen)
    assert len(sockets) == 1, proxy.routed[seen:]
    watched = cluster.servers[sockets[0].upstream]  # B: where the browser's live socket is
    agent_side = cluster.servers[1 - sockets[0].upstream]  # A: where the agent calls

    created = agent_call(
        agent_side, team.token, "create_for", {"queue": "default", "title": "made on the other process"}
    )
    todo_id = created["todo"]["id"]
    row = page.locator(f"#todo-{todo_id}")
    expect(row).to_be_visible(timeout=WAIT)
    expect(row).to_have_class(re.compile(r"\brow-pending\b"))

    claimed = agent_call(agent_side, team.token, "claim_next", {"queue": "default"})
    assert claimed["todo"]["id"] == todo_id
    expect(row).to_have_class(re.compile(r"\brow-claimed\b"), timeout=WAIT)
    expect(page.locator("[data-live-region='counts'] [data-count='all']")).to_have_text("1", timeout=WAIT)

    # no reload happened, and the socket never moved: still the one connection to B
    assert proxy.websockets("/ws/board/", since=seen) == sockets, f"the page reconnected: {proxy.routed[seen:]}"
    assert watched.process.poll() is None and agent_side.process.poll() is None, cluster.logs()
    page.context.close()


# --- 2. a bulk job started on A, followed on B, outliving A ----------------------------------------


def signed_in_client(user) -> httpx.Client:
    """An HTTP client with a real session for ``user`` (the session is a database row: every
    process knows it)."""
    from tests.support.live import session_cookie

    client = httpx.Client(timeout=30)
    client.cookies.set("sessionid", session_cookie(user), domain="127.0.0.1")
    return client


def hidden_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


def job_fragment(client: httpx.Client, server: LiveServer, job_id: str) -> httpx.Response:
    """The progress fragment, as the job page's htmx poll asks for it every second."""
    response = client.get(f"{server.url}/todos/bulk/{job_id}/", headers={"HX-Request": "true"})
    assert response.status_code == 200, f"{server.url}: {response.status_code} {response.text[:500]}"
    return response


def loops_waiting_on_a_row_lock() -> bool:
    with connect() as conn:
        return conn.execute(
            """SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND state = 'active'
                              AND query LIKE '%%UPDATE todos%%') AS waiting"""
        ).fetchone()["waiting"]


def test_a_bulk_job_started_on_a_is_followed_on_b_and_finishes_after_a_is_sigkilled(cluster, team):
    """The job is started through A's preview and confirm forms over HTTP; its last chunk is held
    (a row lock this test takes) so the job is surely mid-way when A is SIGKILLed; B's progress
    page shows it running, then its report; every todo is retried exactly once."""
    n = 1_500  # three chunks of 500
    insert_dead_letters(team.endpoint_id, n)
    with connect() as conn:
        oldest = conn.execute("SELECT id FROM todos ORDER BY created_at LIMIT 1").fetchone()["id"]
    blocker = connect(autocommit=False)
    try:
        blocker.execute("SELECT id FROM todos WHERE id = %s FOR UPDATE", (oldest,))
        with signed_in_client(team.user) as client:
            listing = client.get(f"{cluster.a.url}/todos/?state=dead")
            assert listing.status_code == 200, cluster.a.log()
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', listing.text).group(1)
            htmx = {"HX-Request": "true"}
            preview = client.post(
                f"{cluster.a.url}/todos/bulk/preview/",
                headers=htmx,
                data={"action": "retry", "scope": "matching", "state": "dead", "csrfmiddlewaretoken": csrf},
            )
            assert preview.status_code == 200, preview.text
            assert f"{n:,} todos can be retried" in preview.text
            form = hidden_fields(preview.text)
            assert form["action"] == "retry" and form["scope"] == "matching" and form["state"] == "dead"
            started = client.post(f"{cluster.a.url}/todos/bulk/", headers=htmx, data=form)
            assert started.status_code == 200, started.text
            job_id = re.search(r'id="bulk-job-([0-9a-f-]+)"', started.text).group(1)

            # followed on B: the loops process works it (the daphne servers run no loops) and
            # stops at the held row, mid-job
            def running_and_held():
                fragment = job_fragment(client, cluster.b, job_id)
                return 'data-state="running"' in fragment.text and loops_waiting_on_a_row_lock() and fragment

            fragment = wait_for(
                running_and_held, 30, lambda: f"the job never ran up to the held row\n{cluster.logs()}", 0.2
            )
            assert 'hx-trigger="every 1s"' in fragment.text
            progress = re.search(r"([\d,]+) of ([\d,]+) done", fragment.text)
            assert progress and progress.group(2) == f"{n:,}" and int(progress.group(1).replace(",", "")) < n

            kill(cluster.a.process)  # the process that started the job
            with pytest.raises(httpx.TransportError):
                client.get(f"{cluster.a.url}/healthz", timeout=2)
            assert 'data-state="running"' in job_fragment(client, cluster.b, job_id).text
            blocker.rollback()  # the last chunk may go on

            def finished():
                fragment = job_fragment(client, cluster.b, job_id)
                return 'data-state="running"' not in fragment.text and fragment

            fragment = wait_for(finished, 30, lambda: f"the job did not finish\n{cluster.logs()}", 0.2)
            assert 'data-state="done"' in fragment.text, fragment.text
            assert (
                f"{n:,}</strong> changed" in fragment.text
                and "<strong data-skipped>0</strong> skipped" in fragment.text
            )
            assert "board:bulk-finished" in fragment.headers["HX-Trigger"]
            page = client.get(f"{cluster.b.url}/todos/bulk/{job_id}/")  # the job's own page, on B
            assert page.status_code == 200 and f"{n:,}</strong> changed" in page.text
    finally:
        blocker.rollback()
        blocker.close()

    per_todo = audits_per_todo("todo.retry")
    assert len(per_todo) == n and set(per_todo.values()) == {1}, {k: v for k, v in per_todo.items() if v != 1}
    assert states() == {"pending": n}


# --- 3. the relay fails over ---------------------------------------------------------------------------


@pytest.mark.browser
def test_the_relay_fails_over_when_its_holder_is_sigkilled_and_the_survivor_stays_live(cluster, chromium, team, relay):
    """Only the subprocesses stand for the relay (the test run's own candidate is stopped). The
    loops process is paused (SIGSTOP) for the election, so a daphne server wins it; that server is
    SIGKILLed; the survivor or the loops process takes over within seconds, and a browser on the
    surviving server sees a change made through it after the kill."""
    from playwright.sync_api import expect

    if relay_holder_pid() == cluster.loops.pid:  # it won an election earlier: stand it again
        cluster.loops.terminate()
        cluster.loops.wait(10)
        cluster.revive()
    daphnes = {s.process.pid: s for s in cluster.servers}
    paused(cluster.loops)  # before the run's relay lets go: the loops process cannot win
    with relay.stopped():
        try:
            holder_pid = wait_for(
                lambda: holder_among(daphnes), 10, lambda: f"no daphne took the relay\n{cluster.logs()}"
            )
        finally:
            os.kill(cluster.loops.pid, signal.SIGCONT)
        holder = daphnes[holder_pid]
        survivor = next(s for s in cluster.servers if s is not holder)
        page = open_live_page(chromium, survivor.url, team.user)

        # relayed by the holder, in the other process
        before = agent_call(survivor, team.token, "create_for", {"queue": "default", "title": "before the kill"})
        expect(page.locator(f"#todo-{before['todo']['id']}")).to_be_visible(timeout=WAIT)

        kill(holder.process)
        killed_at = time.monotonic()
        candidates = {survivor.process.pid, cluster.loops.pid}
        successor = wait_for(
            lambda: holder_among(candidates),
            FAILOVER_SECONDS,
            lambda: f"nobody took the relay over from {holder_pid}\n{cluster.logs()}",
        )
        took = time.monotonic() - killed_at
        assert successor != holder_pid

        # a change made after the kill reaches the survivor's browser through the new holder
        after = agent_call(survivor, team.token, "create_for", {"queue": "default", "title": "after the kill"})
        agent_call(survivor, team.token, "claim_next", {"queue": "default"})  # the oldest: "before the kill"
        expect(page.locator(f"#todo-{after['todo']['id']}")).to_be_visible(timeout=WAIT)
        expect(page.locator(f"#todo-{before['todo']['id']}")).to_have_class(
            re.compile(r"\brow-claimed\b"), timeout=WAIT
        )
        expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        page.context.close()
    print(f"relay failover: {holder_pid} killed, {successor} relaying after {took:.2f} s")

"""``board_client.Client`` and ``AsyncClient`` against a real Board (daphne on the test database):
every verb, the errors as the server answers them, the fence kept for the caller, long polls, and
the retries, seen from a real HTTP server in front of the Board that answers 503, hangs up or is
not there yet."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import factories
from tests.support.live_server import free_port
from todos.agents.api.verbs import VERBS
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
sys.path.insert(0, str(CLIENT))

from board_client import (  # noqa: E402
    AsyncClient,
    BoardError,
    Client,
    Conflict,
    Forbidden,
    Invalid,
    LeaseLost,
    NotFound,
    ServerError,
    Unauthorized,
    Unavailable,
)
from board_client import types as board_types  # noqa: E402

REQUEST_ID = re.compile(r"^[0-9a-f]{20}$")
FAST = {"retries": 2, "backoff": 0.01, "backoff_max": 0.05}  # retries without the wait


# --- the tenancy and the clients ---------------------------------------------------------------


@dataclass
class Board:
    url: str
    token: str
    team: Any
    agent: Any  # the endpoint's AgentScope, for store calls

    def client(self, **options) -> Client:
        return Client(self.url, self.token, **{**FAST, **options})


@pytest.fixture
def board(asgi_server, store_db) -> Board:
    team = factories.team()
    worker = factories.endpoint(team, slug="worker", queues=("default", "other"))
    return Board(url=asgi_server.url, token=worker.token, team=team, agent=factories.agent(worker))


@pytest.fixture
def client(board):
    with board.client() as c:
        yield c


def run(coroutine):
    return asyncio.run(coroutine)


def row(todo_id: str) -> dict:
    with db.connect() as conn:
        return conn.execute("SELECT * FROM todos WHERE id = %s", (todo_id,)).fetchone()


def count(where: str = "true", params: tuple = ()) -> int:
    with db.connect() as conn:
        return conn.execute(f"SELECT count(*) AS n FROM todos WHERE {where}", params).fetchone()["n"]


def open_attempts(todo_id: str) -> list[dict]:
    with db.connect() as conn:
        return conn.execute(
            "SELECT seq, lease_token_hash IS NOT NULL AS fenced FROM todo_attempts"
            " WHERE todo_id = %s AND ended_at IS NULL",
            (todo_id,),
        ).fetchall()


def made(board: Board, title: str = "work", queue: str = "default") -> str:
    """A todo made through the store (not the client under test)."""
    return execute(agent_store.create(board.agent, queue=queue, title=title)).todo.id


def assert_answered(error: BoardError, status: int) -> None:
    """An error from the server carries its status and the request id it was logged under."""
    assert error.status == status, error
    assert error.request_id and REQUEST_ID.match(error.request_id), error.request_id


# --- a real HTTP server in front of the Board ----------------------------------------------------


class Stub:
    """A threaded HTTP server that answers each request as its ``plan`` says, then forwards the
    rest to the Board (``upstream``). Plan steps:

    - ``"503"``: Board's 503 envelope with ``Retry-After: 0``; ``"503:<s>"``: ``Retry-After: <s>``;
      ``"503-envelope:<s>"``: no header, ``retry_after`` in the envelope only; ``"503-after"``:
      forward, then answer 503 anyway (a commit just before the connection was cut);
    - ``"drop"``: forward, then hang up without answering (the call lands, its answer is lost);
      ``"close"``: hang up without forwarding;
    - ``"502"``, ``"500"``, ``"404"``, ``"200"``: an HTML page with that status, as a proxy answers.
    """

    def __init__(self, upstream: str | None, plan: list[str] | None = None, port: int = 0):
        self.upstream, self.plan = upstream, list(plan or ())
        self.seen: list[str] = []  # the verbs asked for, in order
        self.forwarded: list[str] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                verb = self.path.rsplit("/", 1)[-1]
                with stub.lock:
                    stub.seen.append(verb)
                    step = stub.plan.pop(0) if stub.plan else "forward"
                stub.answer(self, step, body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> httpx.Response:
        assert self.upstream is not None
        headers = {k: v for k, v in handler.headers.items() if k.lower() in ("authorization", "content-type")}
        response = httpx.post(self.upstream + handler.path, content=body, headers=headers, timeout=60)
        self.forwarded.append(handler.path.rsplit("/", 1)[-1])
        return response

    def answer(self, handler: BaseHTTPRequestHandler, step: str, body: bytes) -> None:
        if step in ("drop", "close"):
            if step == "drop":
                self.forward(handler, body)
            handler.close_connection = True  # the server closes the socket without an answer
            return
        headers: dict[str, str] = {}
        if step == "forward":
            upstream = self.forward(handler, body)
            status, payload = upstream.status_code, upstream.content
            headers = {k: upstream.headers[k] for k in ("Content-Type", "X-Request-Id") if k in upstream.headers}
        elif step.startswith("503"):
            kind, _, seconds = step.partition(":")
            if kind == "503-after":
                self.forward(handler, body)  # it lands, as a commit just before the connection was cut
            retry_after = int(seconds or 0)
            detail = {
                "code": "unavailable",
                "message": "the database is unreachable; retry",
                "retry_after": retry_after,
            }
            status, payload = 503, json.dumps({"error": detail}).encode()
            headers = {"Content-Type": "application/json", "X-Request-Id": "0123456789abcdef0123"}
            if kind != "503-envelope":
                headers["Retry-After"] = str(retry_after)
        else:
            status, payload = int(step), b"<html><body>Something in between</body></html>"
            headers = {"Content-Type": "text/html", "X-Request-Id": "fedcba9876543210fedc"}
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def then(self, plan: list[str]) -> None:
        """Answer the next requests as ``plan`` says."""
        with self.lock:
            self.plan = list(plan)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stubs():
    started: list[Stub] = []

    def start(upstream: str | None, plan: list[str] | None = None, port: int = 0) -> Stub:
        started.append(Stub(upstream, plan, port))
        return started[-1]

    yield start
    for stub in started:
        stub.stop()


class Counting(httpx.HTTPTransport):
    """The real transport, counting the tries the client made (even those that never connected)."""

    def __init__(self):
        super().__init__()
        self.tries = 0
        self.statuses: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.tries += 1
        response = super().handle_request(request)
        self.statuses.append(response.status_code)
        return response


# --- creating ------------------------------------------------------------------------------------


def test_create_for_answers_created_then_the_live_todo_holding_the_key(client):
    first = client.create_for("default", "build 1841", payload={"sha": "9f2c"}, idempotency_key="build-1841")
    again = client.create_for("default", "build 1841, again", idempotency_key="build-1841")
    assert first["created"] is True and again["created"] is False
    assert again["todo"]["id"] == first["todo"]["id"] and again["todo"]["title"] == "build 1841"
    assert first["todo"]["payload"] == {"sha": "9f2c"} and first["todo"]["state"] == "pending"
    assert count("idempotency_key = 'build-1841'") == 1


def test_create_for_leaves_out_what_was_not_given(client):
    """None is "not given": the server's defaults apply, and falsy values that were given are sent."""
    todo = client.create_for("default", "defaults", priority=0, payload=[])["todo"]
    assert (todo["priority"], todo["max_attempts"], todo["payload"], todo["kind"]) == (0, 5, [], None)
    assert todo["scheduled"] is False and todo["requires"] == []


def test_create_batch_answers_in_order_and_a_bad_item_writes_nothing(client):
    results = client.create_batch(
        [
            {"queue": "default", "title": "one", "idempotency_key": "b-1"},
            {"queue": "other", "title": "two", "payload": {"x": 2}},
            {"queue": "default", "title": "one again", "idempotency_key": "b-1"},
        ]
    )
    assert [(r["ok"], r["created"], r["todo"]["title"]) for r in results] == [
        (True, True, "one"),
        (True, True, "two"),
        (True, False, "one"),
    ]
    before = count()
    with pytest.raises(Invalid) as refused:
        client.create_batch(
            [{"queue": "default", "title": "fine"}, {"queue": "default", "title": "x", "delay_seconds": -5}]
        )
    assert refused.value.field == "items[1].delay_seconds"
    assert_answered(refused.value, 400)
    with pytest.raises(Forbidden, match=r"items\[0\]\.queue"):
        client.create_batch([{"queue": "elsewhere", "title": "outside"}, {"queue": "default", "title": "fine"}])
    assert count() == before


def test_the_async_client_creates_and_names_a_bad_item(board):
    async def scenario():
        async with AsyncClient(board.url, board.token, **FAST) as c:
            created = await c.create_for("default", "async one", idempotency_key="a-1")
            again = await c.create_for("default", "async one", idempotency_key="a-1")
            batch = await c.create_batch([{"queue": "default", "title": "a"}, {"queue": "default", "title": "b"}])
            try:
                await c.create_batch([{"queue": "default", "title": "a"}, {"queue": "default", "title": ""}])
            except Invalid as exc:
                return created, again, batch, exc
            raise AssertionError("an empty title was accepted")

    created, again, batch, refused = run(scenario())
    assert (created["created"], again["created"], again["todo"]["id"]) == (True, False, created["todo"]["id"])
    assert [r["todo"]["title"] for r in batch] == ["a", "b"]
    assert refused.field == "items[1].title"
    assert count() == 3


# --- reading ---------------------------------------------------------------------------------------


def test_list_todos_pages_newest_first_to_the_end(client, board):
    ids = [made(board, f"todo {n}") for n in range(5)]
    seen, cursor, pages = [], None, 0
    while True:
        page = client.list_todos(limit=2, cursor=cursor)
        pages += 1
        seen += [t["id"] for t in page["todos"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1] and pages == 3
    assert [t["id"] for t in client.list_todos(queue="other")["todos"]] == []


def test_get_todo_answers_the_result_and_the_attempts(client, board):
    todo_id = made(board)
    client.claim(todo_id, claimant="tester")
    client.complete(todo_id, result={"exit_code": 0}, summary="built")
    detail = client.get_todo(todo_id)
    assert detail["todo"]["state"] == "done" and detail["todo"]["result"] == {"exit_code": 0}
    assert [(a["outcome"], a["summary"], a["claimant"]) for a in detail["attempts"]] == [
        ("completed", "built", "tester")
    ]
    assert detail["attempts_total"] == 1
    assert detail["after"] == [] and detail["parents_left"] == 0


def test_get_todo_answers_the_parents_it_waits_for(client, board):
    parent = made(board)
    child = client.create_for("default", "child", after=[parent])["todo"]["id"]
    detail = client.get_todo(child)
    assert detail["after"] == [parent] and detail["parents_left"] == 1 and detail["todo"]["blocked"]


# --- claiming, long polls and reports ----------------------------------------------------------------


def test_claim_next_long_polls_until_another_thread_creates_work(client, board):
    created: list[str] = []

    def create_soon():
        time.sleep(0.5)
        with board.client() as other:
            created.append(other.create_for("default", "arrives later")["todo"]["id"])

    thread = threading.Thread(target=create_soon)
    started = time.monotonic()
    thread.start()
    claim = client.claim_next(wait_seconds=10)
    thread.join()
    assert claim is not None and claim["todo"]["id"] == created[0]
    assert 0.4 < time.monotonic() - started < 5
    assert row(created[0])["state"] == "claimed"


def test_the_async_long_poll_wakes_for_work_created_meanwhile(board):
    created: list[str] = []

    def create_soon():
        time.sleep(0.5)
        created.append(made(board, "arrives later"))

    async def scenario():
        async with AsyncClient(board.url, board.token, **FAST) as c:
            thread = threading.Thread(target=create_soon)
            thread.start()
            claim = await c.claim_next(wait_seconds=10, require_fence=True)
            thread.join()
            return claim, c.lease_token(created[0])

    started = time.monotonic()
    claim, kept = run(scenario())
    assert claim is not None and claim["todo"]["id"] == created[0]
    assert kept == claim["lease_token"]
    assert 0.4 < time.monotonic() - started < 5


def test_a_long_poll_outlasts_a_shorter_timeout(board):
    """The read timeout is stretched by the wait: an empty poll is None, not a lost answer."""
    with board.client(timeout=0.5, retries=0) as c:
        started = time.monotonic()
        assert c.claim_next(wait_seconds=1.5) is None
    assert time.monotonic() - started >= 1.4


def test_heartbeat_extends_the_lease(client, board):
    todo_id = made(board)
    claim = client.claim(todo_id, lease_ttl_seconds=30)
    extended = client.heartbeat(todo_id, lease_ttl_seconds=600)
    assert extended["lease_expires_at"] > claim["todo"]["lease_expires_at"]
    assert (row(todo_id)["lease_expires_at"] - row(todo_id)["updated_at"]).total_seconds() > 500


def test_complete_with_next_claims_the_next_todo_and_keeps_its_token(client, board):
    first, second = made(board, "first"), made(board, "second")
    claim = client.claim_next(require_fence=True)
    assert claim is not None and claim["todo"]["id"] == first
    done = client.complete(first, summary="built", next={"require_fence": True})
    following = Client.next_of(done)
    assert done["todo"]["state"] == "done" and following is not None and following["todo"]["id"] == second
    assert client.lease_token(first) is None and client.lease_token(second) == following["lease_token"]
    client.heartbeat(second)  # fenced: refused without the kept token
    failed = client.fail(second, summary="broke", next={})
    assert failed["todo"]["state"] == "failed" and failed["todo"]["next_retry_at"] is not None
    assert Client.next_of(failed) is None
    assert open_attempts(first) == open_attempts(second) == []


def test_the_async_client_keeps_the_token_of_a_next_claim(board):
    first, second = made(board, "first"), made(board, "second")

    async def scenario():
        async with AsyncClient(board.url, board.token, **FAST) as c:
            await c.claim(first, require_fence=True)
            done = await c.complete(first, next={"require_fence": True, "wait_seconds": 1})
            following = AsyncClient.next_of(done)
            assert following is not None
            await c.heartbeat(following["todo"]["id"])
            return following, await c.complete(following["todo"]["id"], next={"wait_seconds": 0.2})

    following, last = run(scenario())
    assert following["todo"]["id"] == second and AsyncClient.next_of(last) is None
    assert row(first)["state"] == row(second)["state"] == "done"


def test_release_gives_the_todo_back(client, board):
    todo_id = made(board)
    client.claim(todo_id, require_fence=True)
    released = client.release(todo_id, summary="not now")
    assert released["state"] == "pending" and row(todo_id)["owner"] is None
    assert client.lease_token(todo_id) is None
    again = client.claim_next()
    assert again is not None and again["todo"]["id"] == todo_id


def test_claim_batch_and_complete_batch_keep_and_use_each_token(client, board):
    ids = {made(board, f"batch {n}") for n in range(3)}
    claims = client.claim_batch(5, require_fence=True)
    assert {c["todo"]["id"] for c in claims} == ids and all(client.lease_token(i) for i in ids)
    results = client.complete_batch([{"id": i, "summary": "done"} for i in sorted(ids)])
    assert all(r["ok"] for r in results) and {r["id"] for r in results} == ids
    assert count("state = 'done'") == 3 and all(client.lease_token(i) is None for i in ids)


def test_the_lease_verbs(client):
    assert client.set_default_lease(120)["default_lease_ttl_seconds"] == 120
    lease = client.get_default_lease()
    assert lease["default_lease_ttl_seconds"] == lease["effective_lease_ttl_seconds"] == 120
    assert client.set_default_lease(None)["default_lease_ttl_seconds"] is None


def test_the_schedule_verbs(client):
    nightly = client.create_schedule(
        "nightly", "0 3 * * *", "Europe/Berlin", "default", "Audit", payload={"deep": True}
    )
    assert (nightly["paused"], nightly["missed"], nightly["payload"]) == (False, "skip", {"deep": True})
    edited = client.update_schedule(nightly["id"], "nightly", "30 6 * * 1-5", "UTC", "default", "Report")
    assert (edited["cron"], edited["title"], edited["payload"]) == ("30 6 * * 1-5", "Report", None)
    fired = client.fire_schedule(nightly["id"])
    assert row(fired["todo_id"])["source"] == "schedule"
    assert (
        fired["schedule"]["fires"][0]["how"] == "manual"
        and fired["schedule"]["fires"][0]["todo_id"] == fired["todo_id"]
    )
    assert client.pause_schedule(nightly["id"])["paused"] is True
    assert client.resume_schedule(nightly["id"])["paused"] is False
    client.create_schedule("hourly", "0 * * * *", "UTC", "default", "Tick")
    first = client.list_schedules(limit=1)
    rest = client.list_schedules(limit=1, cursor=first["next_cursor"])
    assert [s["name"] for s in first["schedules"] + rest["schedules"]] == ["hourly", "nightly"]
    with pytest.raises(Invalid) as refused:
        client.create_schedule("bad", "61 * * * *", "UTC", "default", "Never")
    assert refused.value.field == "cron"
    assert client.delete_schedule(nightly["id"])["deleted"] is True
    with pytest.raises(NotFound):
        client.pause_schedule(nightly["id"])


# --- errors, as the server answers them ----------------------------------------------------------


def test_each_error_is_its_class_with_the_status_and_request_id(client, board):
    with pytest.raises(Invalid) as invalid:
        client.create_for("default", "later", delay_seconds=-1)
    assert invalid.value.field == "delay_seconds"
    assert_answered(invalid.value, 400)
    with pytest.raises(Invalid) as invalid:
        client.claim_next(wait_seconds=31)
    assert invalid.value.field == "wait_seconds"

    other_team = factories.endpoint(factories.team(), slug="elsewhere")
    foreign = execute(agent_store.create(factories.agent(other_team), queue="default", title="theirs")).todo.id
    with pytest.raises(NotFound) as missing:
        client.get_todo(foreign)
    assert_answered(missing.value, 404)

    with pytest.raises(Forbidden) as outside:
        client.create_for("elsewhere", "outside the scope")
    assert_answered(outside.value, 403)
    reader = factories.endpoint(board.team, slug="reader", verbs=["list_todos"])
    with Client(board.url, reader.token, **FAST) as c, pytest.raises(Forbidden) as no_verb:
        c.create_for("default", "not a verb of mine")
    assert_answered(no_verb.value, 403)

    with Client(board.url, "bd_not-a-real-token", **FAST) as c, pytest.raises(Unauthorized) as stranger:
        c.list_todos()
    assert_answered(stranger.value, 401)

    todo_id = made(board)
    client.claim(todo_id)
    with pytest.raises(Conflict) as taken:
        client.claim(todo_id)
    assert type(taken.value) is Conflict  # a claim's conflict is not a lost lease
    assert_answered(taken.value, 409)
    assert count() == 2  # nothing written by the refused calls


def test_the_async_client_raises_the_same_classes(board):
    async def scenario():
        async with AsyncClient(board.url, board.token, **FAST) as c:
            caught: list[BoardError] = []
            for call in (
                lambda: c.create_for("default", "x", run_at="not a time"),
                lambda: c.get_todo("td_nothing_here"),
                lambda: c.list_todos(queue="elsewhere"),
                lambda: c.heartbeat(made(board)),  # pending, not held
            ):
                try:
                    await call()
                except BoardError as exc:
                    caught.append(exc)
            return caught

    caught = run(scenario())
    assert [type(e) for e in caught] == [Invalid, NotFound, Forbidden, LeaseLost]
    assert isinstance(caught[0], Invalid) and caught[0].field == "run_at"
    assert [e.status for e in caught] == [400, 404, 403, 409]


def test_a_bad_next_is_named_and_the_report_not_written(client, board):
    todo_id = made(board)
    client.claim(todo_id, require_fence=True)
    with pytest.raises(Invalid) as refused:
        client.complete(todo_id, next={"wait_seconds": -1})
    assert refused.value.field == "next.wait_seconds"
    assert row(todo_id)["state"] == "claimed" and client.lease_token(todo_id) is not None
    assert client.complete(todo_id)["todo"]["state"] == "done"  # the kept token still works


def test_an_error_inside_next_is_raised_by_next_of():
    reported: Any = {"todo": {}, "next": {"error": {"code": "unavailable", "message": "the database is unreachable"}}}
    with pytest.raises(Unavailable) as raised:
        Client.next_of(reported)
    assert raised.value.status == 503 and "unreachable" in str(raised.value)


# --- the fence ---------------------------------------------------------------------------------------


def take_over(board: Board, first: Client, second: Client) -> tuple[str, str]:
    """``first`` claims a todo (fenced, for a second); its lease lapses and ``second`` takes it over."""
    todo_id = made(board)
    held = first.claim_next(require_fence=True, lease_ttl_seconds=1)
    assert held is not None and first.lease_token(todo_id) == held["lease_token"]
    time.sleep(1.5)  # the lease lapses
    taken = second.claim_next(require_fence=True)
    assert taken is not None and taken["todo"]["id"] == todo_id
    return todo_id, held["lease_token"]


def test_a_report_after_a_takeover_is_lease_lost(board):
    with board.client() as first, board.client() as second:
        todo_id, _ = take_over(board, first, second)
        with pytest.raises(LeaseLost) as lost:
            first.complete(todo_id, summary="too late")
        assert_answered(lost.value, 409)
        assert first.lease_token(todo_id) is None  # dropped with the lease
        assert row(todo_id)["state"] == "claimed" and [a["seq"] for a in open_attempts(todo_id)] == [2]
        assert second.complete(todo_id)["todo"]["state"] == "done"


def test_a_heartbeat_or_batch_item_after_a_takeover_drops_the_kept_token(board):
    """Passing the kept token explicitly (as a worker does) or completing in a batch forgets it too."""
    with board.client() as first, board.client() as second:
        todo_id, token = take_over(board, first, second)
        with pytest.raises(LeaseLost):
            first.heartbeat(todo_id, lease_token=token)
        assert first.lease_token(todo_id) is None
        other_id, _ = take_over(board, first, second)
        [result] = first.complete_batch([{"id": other_id, "summary": "too late"}])
        assert result["ok"] is False and result["error"]["code"] == "conflict"
        assert first.lease_token(other_id) is None
        assert row(todo_id)["state"] == row(other_id)["state"] == "claimed"


def test_an_explicit_lease_token_overrides_the_kept_one(client, board):
    todo_id = made(board)
    client.claim(todo_id, require_fence=True)
    with pytest.raises(LeaseLost):
        client.heartbeat(todo_id, lease_token="not-this-lease")
    assert row(todo_id)["state"] == "claimed"
    assert client.lease_token(todo_id) is not None  # the caller's token was refused, not the kept one
    assert client.complete(todo_id)["todo"]["state"] == "done"


def test_an_unfenced_claim_forgets_an_older_token_for_the_todo(client, board):
    """A kept token from a lapsed fenced claim must not be sent with the todo's new, unfenced lease."""
    todo_id = made(board)
    client.claim(todo_id, require_fence=True, lease_ttl_seconds=1)
    time.sleep(1.5)
    again = client.claim_next()
    assert again is not None and again["todo"]["id"] == todo_id and "lease_token" not in again
    assert client.lease_token(todo_id) is None
    assert client.complete(todo_id)["todo"]["state"] == "done"


def test_a_fenced_todo_reported_without_its_token_is_lease_lost(board):
    """What the kept token saves the caller from: a fresh client knows no token for the lease."""
    todo_id = made(board)
    with board.client() as holder, board.client() as stranger:
        holder.claim(todo_id, require_fence=True)
        with pytest.raises(LeaseLost):
            stranger.complete(todo_id)
        assert holder.complete(todo_id)["todo"]["state"] == "done"


# --- retries: 503 for every verb ------------------------------------------------------------------


@dataclass
class Case:
    prepare: Callable[[Client, Board], Any]  # on the real Board, through a client not under test
    call: Callable[[Any, Any], Any]  # the verb, through the client under test (sync or async)
    check: Callable[[Any, Any], bool]


def schedule(c: Client) -> str:
    return c.create_schedule("nightly", "0 3 * * *", "UTC", "default", "Audit")["id"]


def claimed(c: Client, board: Board) -> str:
    todo_id = made(board)
    c.claim(todo_id)
    return todo_id


CASES: dict[str, Case] = {
    "create_for": Case(
        lambda c, b: None,
        lambda c, _: c.create_for("default", "through 503s"),
        lambda out, _: out["created"] and count("title = 'through 503s'") == 1,
    ),
    "create_batch": Case(
        lambda c, b: None,
        lambda c, _: c.create_batch([{"queue": "default", "title": "a"}, {"queue": "default", "title": "b"}]),
        lambda out, _: [r["todo"]["title"] for r in out] == ["a", "b"] and count() == 2,
    ),
    "list_todos": Case(lambda c, b: made(b), lambda c, i: c.list_todos(), lambda out, i: out["todos"][0]["id"] == i),
    "get_todo": Case(lambda c, b: made(b), lambda c, i: c.get_todo(i), lambda out, i: out["todo"]["id"] == i),
    "claim_next": Case(lambda c, b: made(b), lambda c, i: c.claim_next(), lambda out, i: out["todo"]["id"] == i),
    "claim": Case(lambda c, b: made(b), lambda c, i: c.claim(i), lambda out, i: row(i)["state"] == "claimed"),
    "claim_batch": Case(lambda c, b: made(b), lambda c, i: c.claim_batch(3), lambda out, i: out[0]["todo"]["id"] == i),
    "heartbeat": Case(claimed, lambda c, i: c.heartbeat(i), lambda out, i: out["state"] == "claimed"),
    "complete": Case(claimed, lambda c, i: c.complete(i), lambda out, i: row(i)["state"] == "done"),
    "fail": Case(claimed, lambda c, i: c.fail(i), lambda out, i: row(i)["state"] == "failed"),
    "release": Case(claimed, lambda c, i: c.release(i), lambda out, i: row(i)["state"] == "pending"),
    "complete_batch": Case(
        claimed, lambda c, i: c.complete_batch([{"id": i}]), lambda out, i: out[0]["ok"] and row(i)["state"] == "done"
    ),
    "get_default_lease": Case(
        lambda c, b: None, lambda c, _: c.get_default_lease(), lambda out, _: out["effective_lease_ttl_seconds"] > 0
    ),
    "set_default_lease": Case(
        lambda c, b: None, lambda c, _: c.set_default_lease(90), lambda out, _: out["default_lease_ttl_seconds"] == 90
    ),
    "list_schedules": Case(
        lambda c, b: schedule(c),
        lambda c, _: c.list_schedules(),
        lambda out, _: out["schedules"][0]["name"] == "nightly",
    ),
    "create_schedule": Case(
        lambda c, b: None,
        lambda c, _: c.create_schedule("made", "0 * * * *", "UTC", "default", "Tick"),
        lambda out, _: out["name"] == "made",
    ),
    "update_schedule": Case(
        lambda c, b: schedule(c),
        lambda c, i: c.update_schedule(i, "nightly", "0 4 * * *", "UTC", "default", "Audit"),
        lambda out, _: out["cron"] == "0 4 * * *",
    ),
    "fire_schedule": Case(
        lambda c, b: schedule(c), lambda c, i: c.fire_schedule(i), lambda out, _: count("source = 'schedule'") == 1
    ),
    "pause_schedule": Case(lambda c, b: schedule(c), lambda c, i: c.pause_schedule(i), lambda out, _: out["paused"]),
    "resume_schedule": Case(
        lambda c, b: c.pause_schedule(schedule(c))["id"],
        lambda c, i: c.resume_schedule(i),
        lambda out, _: not out["paused"],
    ),
    "delete_schedule": Case(
        lambda c, b: schedule(c),
        lambda c, i: c.delete_schedule(i),
        lambda out, _: out["deleted"] and schedules() == 0,
    ),
}


def schedules() -> int:
    with db.connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM schedules").fetchone()["n"]


def test_every_verb_has_a_retry_case():
    assert set(CASES) == set(VERBS)


def through(kind: str, url: str, token: str, call: Callable[[Any], Any], **options) -> Any:
    """``call(client)`` with a fresh Client or AsyncClient on ``url``."""
    options = {**FAST, **options}
    if kind == "sync":
        with Client(url, token, **options) as c:
            return call(c)

    async def scenario():
        async with AsyncClient(url, token, **options) as c:
            return await call(c)

    return run(scenario())


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("verb", sorted(CASES))
def test_a_503_is_retried_for_every_verb_and_then_succeeds(board, client, stubs, verb, kind):
    case = CASES[verb]
    context = case.prepare(client, board)
    stub = stubs(board.url, ["503", "503"])
    out = through(kind, stub.url, board.token, lambda c: case.call(c, context))
    assert stub.seen == [verb] * 3 and stub.forwarded == [verb]
    assert case.check(out, context)


def test_the_last_503_is_raised_with_its_retry_after(board, stubs):
    stub = stubs(board.url, ["503"] * 5)
    with Client(stub.url, board.token, retries=2, backoff=0.01) as c, pytest.raises(Unavailable) as raised:
        c.claim_next()
    assert len(stub.seen) == 3 and stub.forwarded == []
    assert raised.value.status == 503 and raised.value.retry_after == 0.0
    assert raised.value.request_id == "0123456789abcdef0123" and raised.value.outcome_unknown is False


def test_retries_0_sends_once(board, stubs):
    stub = stubs(board.url, ["503-envelope:7"])
    with Client(stub.url, board.token, retries=0) as c, pytest.raises(Unavailable) as raised:
        c.get_todo("td_x")
    assert stub.seen == ["get_todo"]
    assert raised.value.retry_after == 7.0  # from the envelope, when the header is missing


def test_the_backoff_honours_retry_after(board, client, stubs):
    todo_id = made(board)
    stub = stubs(board.url, ["503:1"])
    with Client(stub.url, board.token, retries=3, backoff=0.01) as c:
        started = time.monotonic()
        assert c.get_todo(todo_id)["todo"]["id"] == todo_id
        elapsed = time.monotonic() - started
    assert 0.95 <= elapsed < 3 and len(stub.seen) == 2


def test_the_async_backoff_honours_retry_after(board, stubs):
    stub = stubs(board.url, ["503:1"])

    async def scenario():
        async with AsyncClient(stub.url, board.token, retries=3, backoff=0.01) as c:
            started = time.monotonic()
            await c.create_for("default", "after a second")
            return time.monotonic() - started

    assert 0.95 <= run(scenario()) < 3 and len(stub.seen) == 2 and count() == 1


# --- retries: a connection lost after the request was sent ---------------------------------------


SAFE = {
    "get_todo": (lambda c, b: made(b), lambda c, i: c.get_todo(i)),
    "list_todos": (lambda c, b: made(b), lambda c, i: c.list_todos()),
    "heartbeat": (claimed, lambda c, i: c.heartbeat(i)),
    "create_for": (lambda c, b: None, lambda c, _: c.create_for("default", "keyed", idempotency_key="k-1")),
    "create_batch": (
        lambda c, b: None,
        lambda c, _: c.create_batch([{"queue": "default", "title": "keyed", "idempotency_key": "k-1"}]),
    ),
    "set_default_lease": (lambda c, b: None, lambda c, _: c.set_default_lease(90)),
    "update_schedule": (
        lambda c, b: schedule(c),
        lambda c, i: c.update_schedule(i, "renamed", "0 4 * * *", "UTC", "default", "Audit"),
    ),
    "pause_schedule": (lambda c, b: schedule(c), lambda c, i: c.pause_schedule(i)),
}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("verb", sorted(SAFE))
def test_a_safe_verb_whose_answer_was_lost_is_sent_again(board, client, stubs, verb, kind):
    """The first try lands and its answer is lost; the second lands again, harmlessly."""
    prepare, call = SAFE[verb]
    context = prepare(client, board)
    stub = stubs(board.url, ["drop"])
    out = through(kind, stub.url, board.token, lambda c: call(c, context))
    assert stub.seen == [verb, verb] and stub.forwarded == [verb, verb]
    if verb == "create_for":
        assert out["created"] is False  # the lost try made it; the repeat answers that todo
    if verb in ("create_for", "create_batch"):
        assert count("idempotency_key = 'k-1'") == 1


UNSAFE = {
    "claim_next": (lambda c, b: made(b), lambda c, i: c.claim_next(), lambda i: row(i)["state"] == "claimed"),
    "claim": (lambda c, b: made(b), lambda c, i: c.claim(i), lambda i: row(i)["state"] == "claimed"),
    "complete": (claimed, lambda c, i: c.complete(i), lambda i: row(i)["state"] == "done"),
    "fail": (claimed, lambda c, i: c.fail(i), lambda i: row(i)["state"] == "failed"),
    "release": (claimed, lambda c, i: c.release(i), lambda i: row(i)["state"] == "pending"),
    "create_for": (lambda c, b: None, lambda c, _: c.create_for("default", "no key"), lambda _: count() == 1),
    "create_batch": (
        lambda c, b: None,
        lambda c, _: c.create_batch(
            [{"queue": "default", "title": "a", "idempotency_key": "k"}, {"queue": "default", "title": "b"}]
        ),
        lambda _: count() == 2,
    ),
    "fire_schedule": (lambda c, b: schedule(c), lambda c, i: c.fire_schedule(i), lambda _: count() == 1),
}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("verb", sorted(UNSAFE))
def test_an_unsafe_verb_whose_answer_was_lost_is_not_sent_again(board, client, stubs, verb, kind):
    """It landed; sending it again would claim, report or create a second time. The caller is
    told the outcome is unknown."""
    prepare, call, landed = UNSAFE[verb]
    context = prepare(client, board)
    stub = stubs(board.url, ["drop"])
    with pytest.raises(Unavailable) as raised:
        through(kind, stub.url, board.token, lambda c: call(c, context))
    assert stub.seen == [verb]
    assert raised.value.outcome_unknown is True and raised.value.status == 0
    assert "may or may not have landed" in str(raised.value)
    assert landed(context)


def test_an_empty_idempotency_key_is_no_key_and_is_not_sent_again(board, client, stubs):
    """The server reads "" as no key, so a repeat would create a second todo: sent once."""
    stub = stubs(board.url, ["drop"])
    with Client(stub.url, board.token, backoff=0.01) as c, pytest.raises(Unavailable) as raised:
        c.create_for("default", "empty key", idempotency_key="")
    assert stub.seen == ["create_for"] and raised.value.outcome_unknown is True and count() == 1


def test_a_safe_verb_gives_up_after_its_retries_saying_so(board, stubs):
    stub = stubs(board.url, ["close"] * 5)
    with Client(stub.url, board.token, retries=2, backoff=0.01) as c, pytest.raises(Unavailable) as raised:
        c.get_todo("td_x")
    assert stub.seen == ["get_todo"] * 3 and stub.forwarded == []
    assert "gave up after 3 tries" in str(raised.value) and raised.value.outcome_unknown is True


def test_a_refused_connection_is_sent_again_whatever_the_verb(board, client):
    """Nothing listens: the request never left, so even a claim is safe to send again."""
    port = free_port()
    transport = Counting()
    with Client(f"http://127.0.0.1:{port}", board.token, retries=2, backoff=0.01, transport=transport) as c:
        with pytest.raises(Unavailable) as raised:
            c.claim_next()
    assert transport.tries == 3 and transport.statuses == []
    assert raised.value.outcome_unknown is False and "never sent" in str(raised.value)


def test_a_claim_rides_out_a_server_that_starts_late(board, stubs):
    """A server restarting refuses connections for a moment; the claim is sent again and lands once."""
    todo_id = made(board)
    port = free_port()
    late: list[Stub] = []
    starter = threading.Timer(0.5, lambda: late.append(stubs(board.url, port=port)))
    starter.start()
    try:
        with Client(f"http://127.0.0.1:{port}", board.token, retries=8, backoff=0.1, backoff_max=0.2) as c:
            claim = c.claim_next()
    finally:
        starter.join()
    assert claim is not None and claim["todo"]["id"] == todo_id
    assert late[0].seen == ["claim_next"]


def test_a_proxy_502_is_retried_only_for_a_safe_verb(board, client, stubs):
    todo_id = made(board)
    stub = stubs(board.url, ["502", "502"])
    with Client(stub.url, board.token, **FAST) as c:
        assert c.get_todo(todo_id)["todo"]["id"] == todo_id
        assert stub.seen == ["get_todo"] * 3
        with pytest.raises(Unavailable) as raised:
            stub.then(["502"])
            c.claim_next()
    assert stub.seen[3:] == ["claim_next"] and raised.value.status == 502 and raised.value.outcome_unknown
    assert row(todo_id)["state"] == "pending"


def test_an_answer_without_the_envelope_is_raised_by_its_status(board, stubs):
    stub = stubs(board.url, ["500", "404", "200"])
    with Client(stub.url, board.token, **FAST) as c:
        with pytest.raises(ServerError) as crashed:
            c.claim_next()
        with pytest.raises(BoardError) as elsewhere:
            c.claim_next()
        with pytest.raises(ServerError) as not_json:
            c.claim_next()
    assert crashed.value.status == 500 and crashed.value.request_id == "fedcba9876543210fedc"
    assert "HTTP 500" in str(crashed.value)
    assert type(elsewhere.value) is BoardError and elsewhere.value.status == 404  # not "no such todo"
    assert not_json.value.status == 200 and "not a JSON object" in str(not_json.value)
    assert stub.seen == ["claim_next"] * 3


def test_a_report_refused_after_a_503_that_landed_says_so(board, client, stubs):
    """docs/api.md: a 503 may hide a commit made just before the database's connection was cut; the
    report sent again then finds its own lease gone, and the LeaseLost says why that may be."""
    todo_id = claimed(client, board)
    stub = stubs(board.url, ["503-after"])
    with Client(stub.url, board.token, **FAST) as c, pytest.raises(LeaseLost) as lost:
        c.complete(todo_id, summary="done once")
    assert stub.forwarded == ["complete", "complete"]
    assert "answered 503" in str(lost.value) and row(todo_id)["state"] == "done"


def test_the_input_typeddicts_name_every_field_the_api_takes():
    """``create_batch`` items, a report's ``next`` and ``complete_batch`` items, as the verbs take them."""
    import typing

    def keys(typed) -> set[str]:
        return set(typing.get_type_hints(typed))

    assert keys(board_types.NewTodo) == set(VERBS["create_batch"].input["properties"]["items"]["items"]["properties"])
    assert keys(board_types.NextClaim) == set(VERBS["complete"].input["properties"]["next"]["properties"])
    assert keys(board_types.CompleteItem) == set(
        VERBS["complete_batch"].input["properties"]["items"]["items"]["properties"]
    )


def test_a_token_that_cannot_be_a_header_is_refused_at_once():
    with pytest.raises(ValueError):
        Client("http://127.0.0.1:1", "bd_token\nX-Injected: 1")
    with pytest.raises(ValueError):
        Client("http://127.0.0.1:1", "bd_token", retries=-1)


# --- a real outage: PostgreSQL stopped under the Board --------------------------------------------


@pytest.fixture(scope="module")
def outage():
    from tests.support.outage import outage_root, start_outage_board, stop_outage_board

    root = outage_root()
    board = start_outage_board(root, BOARD_DB_POOL_TIMEOUT="2")
    try:
        yield board
    finally:
        stop_outage_board(board, root)


@pytest.mark.slow
def test_calls_ride_out_a_database_restart(outage):
    """While PostgreSQL is down every verb answers 503 with Retry-After; a create (without a key)
    and then a fenced claim are sent again until it is back, each landing once."""
    transport = Counting()
    outage.pg.stop()
    restart = threading.Timer(3.0, outage.pg.start)
    restart.start()
    try:
        with Client(outage.url, outage.token, retries=20, backoff=0.1, backoff_max=1, transport=transport) as c:
            started = time.monotonic()
            created = c.create_for("default", "through the outage")
            waited = time.monotonic() - started
            claim = c.claim_next(require_fence=True)
            assert claim is not None and claim["todo"]["id"] == created["todo"]["id"]
            c.heartbeat(created["todo"]["id"])  # with the kept token
            c.complete(created["todo"]["id"])
    finally:
        restart.join()
        if not outage.pg.running():
            outage.pg.start()
    assert 503 in transport.statuses and transport.statuses[-4:] == [201, 200, 200, 200]
    first_ok = transport.statuses.index(201)
    assert set(transport.statuses[:first_ok]) == {503}
    assert waited >= 2 * first_ok  # each 503 said Retry-After: 2, and the client waited that long
    with outage.pg.connect() as conn:
        rows = conn.execute("SELECT state FROM todos WHERE title = 'through the outage'").fetchall()
    assert [r["state"] for r in rows] == ["done"]


def test_a_next_that_met_the_outage_raises_unavailable_with_its_retry_after():
    """The report landed; the claim after it met the database down: the server says how long to
    wait inside ``next.error``, and ``next_of`` carries it, as a 503's Retry-After would be."""
    answer = {"todo": {"id": "td_x"}, "next": {"error": {"code": "unavailable", "message": "down", "retry_after": 2}}}
    with pytest.raises(Unavailable) as raised:
        Client.next_of(answer)  # type: ignore[arg-type]
    assert (raised.value.retry_after, raised.value.status) == (2.0, 503)

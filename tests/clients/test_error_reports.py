"""What the Python client and its workers report as an attempt's error object: ``error_of`` for a
handler's exception, ``exit_error`` for a failed command, and the client's ``fail``/``complete``
carrying an ``error`` to a live Board."""

from __future__ import annotations

import sys
import threading

import pytest
from board_client import Client, Fail, Worker
from board_client.command import Tail, command_handler, exit_error
from board_client.worker import ERROR_TRACEBACK_MAX_BYTES, error_of, one_line

from tests import factories
from todos.core.db import execute
from todos.core.selectors.agent_api import get_todo
from todos.core.store import agent as agent_store


class Upstream:
    class Refused(Exception):
        """A nested exception class: its type is module.Outer.Inner."""


def raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 -- the test wants the traceback attached
        return caught


@pytest.fixture
def endpoint(store_db):
    team = factories.team()
    vended = factories.endpoint(team, slug="errors", queues=("default",))
    return vended, factories.agent(vended)


def create(agent, title="t", **fields):
    return execute(agent_store.create(agent, queue="default", title=title, **fields)).todo


def attempt_error(agent, todo_id, n=0):
    return execute(get_todo(agent, todo_id)).attempts[n].error


def work(url, token, handler, *, todos: int) -> Worker:
    worker = Worker(url, token, wait_seconds=1, claimant="errors-test")
    worker.add_handler("default", handler)
    guard = threading.Timer(60, worker.stop)
    guard.start()
    try:
        assert worker.run(max_todos=todos) == 0, worker.fatal
    finally:
        guard.cancel()
    return worker


# --- error_of -----------------------------------------------------------------------------------


def test_error_of_names_the_class_by_its_qualified_name():
    error = error_of(raised(Upstream.Refused("429 from the API")))
    assert error["type"] == f"{__name__}.Upstream.Refused"
    assert error["message"] == "429 from the API"
    assert error["traceback"].startswith("Traceback (most recent call last):")
    assert "in raised" in error["traceback"]
    assert error["traceback"].endswith(one_line(raised(Upstream.Refused("429 from the API"))))


def test_error_of_a_builtin_is_its_bare_name_and_its_one_line_form_the_summary():
    exc = raised(KeyError("user"))
    assert error_of(exc)["type"] == "KeyError"
    assert one_line(exc) == "KeyError: 'user'"


def test_error_of_keeps_the_traceback_s_last_64_kb_on_a_character_boundary():
    exc = raised(RuntimeError("é" * 100_000))
    error = error_of(exc)
    assert len(error["traceback"].encode()) <= ERROR_TRACEBACK_MAX_BYTES
    assert error["traceback"].endswith("é" * 10)
    assert len(error["message"].encode()) <= 4096 and set(error["message"]) == {"é"}


def test_error_of_survives_a_message_that_is_not_valid_unicode():
    error = error_of(raised(ValueError("bad \udc80 byte")))
    assert error["message"].startswith("bad ") and error["type"] == "ValueError"


# --- exit_error ---------------------------------------------------------------------------------


def test_exit_error_is_the_exit_status_stderr_s_last_line_and_its_tail():
    tail = Tail(keep=ERROR_TRACEBACK_MAX_BYTES)
    tail.feed(b"compiling\nerror: missing semicolon\n\n")
    assert exit_error(3, tail) == {
        "type": "exit 3",
        "message": "error: missing semicolon",
        "traceback": "compiling\nerror: missing semicolon",
    }
    assert exit_error(-9, Tail()) == {"type": "signal 9", "message": "signal 9"}


# --- against a live Board ------------------------------------------------------------------------


def test_the_client_sends_an_error_with_fail_and_complete(asgi_server, endpoint):
    vended, agent = endpoint
    failing, completing = create(agent, "fails"), create(agent, "completes")
    with Client(asgi_server.url, vended.token) as client:
        client.claim(failing.id, require_fence=True)
        client.fail(failing.id, error={"type": "Timeout", "message": "30 s"})
        client.claim(completing.id)
        client.complete(completing.id, error={"message": "recovered after a retry"})
        seen = client.get_todo(failing.id)["attempts"][0]["error"]
    assert seen == {"type": "Timeout", "message": "30 s", "traceback": None, "truncated": False}
    assert attempt_error(agent, completing.id) == {"message": "recovered after a retry", "truncated": False}


def test_the_client_sends_an_error_with_a_complete_batch_item(asgi_server, endpoint):
    vended, agent = endpoint
    noisy, quiet = create(agent, "noisy"), create(agent, "quiet")
    with Client(asgi_server.url, vended.token) as client:
        client.claim(noisy.id)
        client.claim(quiet.id)
        results = client.complete_batch([{"id": noisy.id, "error": {"type": "Retried"}}, {"id": quiet.id}])
    assert [r["ok"] for r in results] == [True, True]
    assert attempt_error(agent, noisy.id) == {"type": "Retried", "truncated": False}
    assert attempt_error(agent, quiet.id) is None


def test_the_worker_reports_a_raising_handler_s_error(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "boom", max_attempts=1)

    def handler(job):
        raise Upstream.Refused("upstream said no")

    work(asgi_server.url, vended.token, handler, todos=1)
    got = execute(get_todo(agent, todo.id))
    error = got.attempts[0].error
    assert error["type"] == f"{__name__}.Upstream.Refused" and error["message"] == "upstream said no"
    assert "in handler" in error["traceback"] and error["truncated"] is False
    assert got.attempts[0].summary == f"{__name__}.Upstream.Refused: upstream said no"


def test_a_handler_s_fail_may_carry_an_error_object(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "told", max_attempts=1)

    def handler(job):
        raise Fail("quota", error={"type": "Quota", "message": "429"})

    work(asgi_server.url, vended.token, handler, todos=1)
    assert attempt_error(agent, todo.id) == {"type": "Quota", "message": "429", "truncated": False}


def test_a_failing_command_reports_its_exit_status_and_stderr(asgi_server, endpoint):
    vended, agent = endpoint
    todo = create(agent, "doomed", max_attempts=1)
    script = "import sys; print('step 1', file=sys.stderr); print('fatal: no disk', file=sys.stderr); sys.exit(4)"
    work(asgi_server.url, vended.token, command_handler([sys.executable, "-c", script]), todos=1)
    assert attempt_error(agent, todo.id) == {
        "type": "exit 4",
        "message": "fatal: no disk",
        "traceback": "step 1\nfatal: no disk",
        "truncated": False,
    }

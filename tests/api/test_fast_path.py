"""``/api/v1/<verb>`` served without Django's handler (``todos.agents.api.fast_path``): the same answers,
the same headers, the host check. (Everything else about the API, the long poll stopped by a
client's disconnect included, is tested over real HTTP against daphne, through this path.)"""

from __future__ import annotations

import contextlib
import json

import pytest
from django.core.signals import request_started

from board.asgi import application
from tests import factories
from tests.support.api import asgi_call as call

pytestmark = pytest.mark.usefixtures("store_db")

SECURITY_HEADERS = {
    b"content-security-policy",
    b"x-frame-options",
    b"x-content-type-options",
    b"referrer-policy",
}


@contextlib.contextmanager
def django_requests():
    """The requests Django's handler started meanwhile (its ``request_started`` signal)."""
    started: list = []

    def receiver(**kwargs):
        started.append(kwargs)

    request_started.connect(receiver)
    try:
        yield started
    finally:
        request_started.disconnect(receiver)


@pytest.fixture
def worker():
    team = factories.team()
    return factories.endpoint(team, slug="worker", queues=("default",))


def test_a_verb_is_answered_without_django_s_request_machinery(worker, settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    with django_requests() as started:
        (status, headers, body), _ = call(
            application,
            "/api/v1/create_for",
            json.dumps({"queue": "default", "title": "fast"}).encode(),
            token=worker.token,
        )
    assert status == 201, body
    assert json.loads(body)["todo"]["title"] == "fast"
    assert started == []  # Django's handler never ran
    assert SECURITY_HEADERS <= set(headers) and headers[b"x-frame-options"] == b"DENY"
    assert int(headers[b"content-length"]) == len(body) and headers[b"x-request-id"]


def test_the_openapi_document_and_the_board_still_go_through_django(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    with django_requests() as started:
        (status, headers, body), _ = call(application, "/api/v1/openapi.json", b"", method="GET")
    assert status == 200 and json.loads(body)["openapi"].startswith("3.1")
    assert len(started) == 1


def test_a_host_not_allowed_is_refused_with_the_api_s_error_and_nothing_runs(worker, settings, caplog):
    settings.ALLOWED_HOSTS = ["board.example"]
    (status, headers, body), _ = call(
        application,
        "/api/v1/create_for",
        json.dumps({"queue": "default", "title": "never"}).encode(),
        host=b"evil.example",
        token=worker.token,
    )
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid" and headers[b"x-request-id"]
    assert "ALLOWED_HOSTS" in caplog.text
    from todos.core.db import connect

    with connect() as conn:
        assert conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"] == 0


def test_errors_keep_the_api_shape_and_headers(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    (status, headers, body), _ = call(application, "/api/v1/create_for", b"{}", token="wrong")
    assert status == 401 and json.loads(body)["error"]["code"] == "unauthorized"
    assert SECURITY_HEADERS <= set(headers)
    (status, _, body), _ = call(application, "/api/v1/no/such/verb", b"{}", token="wrong")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"


def test_a_request_that_cannot_be_built_is_an_internal_error_not_a_traceback(worker, settings, monkeypatch, caplog):
    from todos.agents.api import fast_path

    def broken(*args, **kwargs):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    settings.ALLOWED_HOSTS = ["testserver"]
    monkeypatch.setattr(fast_path, "ASGIRequest", broken)
    (status, headers, body), _ = call(
        application,
        "/api/v1/create_for",
        json.dumps({"queue": "default", "title": "never"}).encode(),
        token=worker.token,
    )
    error = json.loads(body)["error"]
    assert status == 500 and error["code"] == "internal"
    assert headers[b"x-request-id"].decode() in error["message"]  # the id to look for in the log
    assert SECURITY_HEADERS <= set(headers)
    assert "internal error in request" in caplog.text and "Traceback" not in body.decode()

"""Daphne's requests skip Twisted's form parsing (board/daphne_requests.py): the body reaches the
application untouched, and no ``email`` parser runs per request."""

from __future__ import annotations

import re

import httpx
import twisted.web.http
from daphne.http_protocol import WebRequest
from twisted.web.test.requesthelper import DummyChannel

from board import daphne_requests
from board.daphne_requests import skip_form_parsing


class _Server:
    def protocol_connected(self, request):
        pass


def _request() -> WebRequest:
    channel = DummyChannel()
    channel.factory = type("Factory", (), {"server": _Server()})()
    return WebRequest(channel)


def test_a_form_post_is_not_parsed_by_twisted(monkeypatch):
    parsed = []
    original = twisted.web.http._parseContentType
    monkeypatch.setattr(twisted.web.http, "_parseContentType", lambda line: parsed.append(line) or original(line))
    monkeypatch.setattr(WebRequest, "process", lambda self: None)
    # Twisted's own behaviour first, whether or not a server module already switched it off
    # (monkeypatch puts back whatever was there after the test).
    monkeypatch.setattr(WebRequest, "__init__", daphne_requests._original_init)

    def receive(request: WebRequest) -> None:
        request.requestHeaders.setRawHeaders(b"content-type", [b"application/x-www-form-urlencoded"])
        request.requestHeaders.setRawHeaders(b"content-length", [b"7"])
        request.gotLength(7)
        request.handleContentChunk(b"a=1&b=2")
        request.requestReceived(b"POST", b"/login/", b"HTTP/1.1")

    stock = _request()
    receive(stock)
    assert parsed and stock.args == {b"a": [b"1"], b"b": [b"2"]}  # what the switch saves

    parsed.clear()
    skip_form_parsing()
    skip_form_parsing()  # idempotent
    trimmed = _request()
    receive(trimmed)
    assert parsed == [] and trimmed.args == {}
    trimmed.content.seek(0)
    assert trimmed.content.read() == b"a=1&b=2"  # the body is still there for the application


def test_the_server_still_reads_form_and_json_bodies(asgi_server, tenancy):
    """Over the wire (daphne with the switch): the agent API reads its JSON, whatever type the
    client declared, and Django reads the sign-in form."""
    response = httpx.post(
        f"{asgi_server.url}/api/v1/create_for",
        content=b'{"queue": "default", "title": "declared as a form"}',
        headers={
            "Authorization": f"Bearer {tenancy.worker_token}",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert response.status_code == 201, response.text
    assert response.json()["todo"]["title"] == "declared as a form"

    # Django read the sign-in form: it answers the fields it was sent (the name filled back in,
    # the password checked); a body it never got would be "this field is required".
    with httpx.Client(base_url=asgi_server.url) as client:
        page = client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None, page.text[:500]
        answer = client.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": token.group(1), "username": "form-reader-7", "password": "not-it"},
            headers={"Referer": f"{asgi_server.url}/accounts/login/"},
        )
    assert answer.status_code == 200
    assert 'value="form-reader-7"' in answer.text and "did not match" in answer.text
    assert "This field is required" not in answer.text

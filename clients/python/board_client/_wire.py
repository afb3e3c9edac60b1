"""How the clients put a call on the wire: ``AsyncWire`` over httpx, ``SyncWire`` over the standard
library's ``http.client`` (or over httpx when the caller hands the client an httpx transport).

Why two: a worker's CPU per job is mostly its one request, and through ``httpx.Client`` a request
cost about three times the CPU of the same request through ``http.client`` (httpx's request and
response models, then httpcore and h11 in pure Python; bench/README.md has the figures). The
synchronous client, which the worker uses, therefore sends its bytes itself: one keep-alive
connection per thread and origin, the JSON body, the answer's status, headers and bytes.

Errors are httpx's either way, so the client's retry rules hold whichever wire carries a call: a
connection that could not be made is ``ConnectError``/``ConnectTimeout`` (nothing was sent);
anything after the request left is ``WriteError``/``ReadError``/``ReadTimeout`` (it may have
landed). Give the client ``transport=httpx.HTTPTransport(...)`` for what ``http.client`` is not
used for here: proxies, HTTP/2, client certificates, a TLS setup other than the system's.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from board_client import tracing


@dataclass
class Answer:
    """What the server answered: the status, the headers (looked up by lower-case name), the body."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


def _body(value: dict[str, Any]) -> bytes:
    """The request's JSON, as httpx writes it (compact, UTF-8, no NaN)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class AsyncWire:
    """The asynchronous client's wire: an ``httpx.AsyncClient`` (its transport, if given)."""

    def __init__(self, base: str, headers: dict[str, str], transport: httpx.AsyncBaseTransport | None):
        self._http = httpx.AsyncClient(base_url=base, headers=headers, transport=transport)

    async def post(self, verb: str, body: dict[str, Any], timeout: float) -> Answer:
        response = await self._http.post(verb, content=_body(body), timeout=timeout,
                                         headers={"Content-Type": "application/json", **tracing.headers()})  # fmt: skip
        return Answer(response.status_code, response.headers, response.content)

    async def close(self) -> None:
        await self._http.aclose()


class SyncWire:
    """The synchronous client's wire: ``http.client`` connections, or an ``httpx.Client`` over the
    transport the caller gave."""

    def __init__(self, base: str, headers: dict[str, str], transport: httpx.BaseTransport | None):
        self._http = httpx.Client(base_url=base, headers=headers, transport=transport) if transport else None
        self._raw = None if transport else Connections(base, headers)

    def post(self, verb: str, body: dict[str, Any], timeout: float) -> Answer:
        if self._raw is not None:
            return self._raw.post(verb, _body(body), timeout)
        assert self._http is not None
        response = self._http.post(verb, content=_body(body), timeout=timeout,
                                   headers={"Content-Type": "application/json", **tracing.headers()})  # fmt: skip
        return Answer(response.status_code, response.headers, response.content)

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()
        if self._http is not None:
            self._http.close()


class Connections:
    """POSTs to ``base`` + verb over keep-alive ``http.client`` connections, one per thread (a
    connection carries one request at a time; the worker's slots and its heartbeats are threads)."""

    def __init__(self, base: str, headers: dict[str, str]):
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise httpx.UnsupportedProtocol(f"the Board's URL must be http:// or https://, not {base!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.path = parts.path if parts.path.endswith("/") else parts.path + "/"
        self.headers = {
            "Host": parts.netloc,
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "board-client",
            **headers,
        }
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    def post(self, verb: str, body: bytes, timeout: float) -> Answer:
        connection = self._connection(timeout)
        try:
            connection.putrequest("POST", self.path + verb, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                connection.putheader(name, value)
            for name, value in tracing.headers().items():  # the current span's context, if any
                connection.putheader(name, value)
            connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
        except OSError as exc:
            self._drop(connection)
            raise httpx.WriteError(f"{verb}: {type(exc).__name__}: {exc}") from exc
        try:
            assert connection.sock is not None
            connection.sock.settimeout(timeout)
            answer = connection.getresponse()
            content = answer.read()
        except TimeoutError as exc:
            self._drop(connection)
            raise httpx.ReadTimeout(f"{verb}: no answer within {timeout:g} s") from exc
        except (OSError, http.client.HTTPException) as exc:
            self._drop(connection)
            raise httpx.ReadError(f"{verb}: {type(exc).__name__}: {exc}") from exc
        if answer.will_close:
            self._drop(connection)
        return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, content)

    def close(self) -> None:
        with self._lock:
            connections, self._open = self._open, set()
        for connection in connections:
            connection.close()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        """This thread's connection, or a new one. An idle connection with something to read was
        closed by the server (or is out of step): a new one then."""
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None and (connection.sock is None or _readable(connection.sock)):
            self._drop(connection)
            connection = None
        if connection is None:
            connection = self._connect(timeout)
            self._local.connection = connection
            with self._lock:
                self._open.add(connection)
        return connection

    def _connect(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=ssl.create_default_context()
            )
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.connect()
        except TimeoutError as exc:
            connection.close()
            raise httpx.ConnectTimeout(f"connecting to {self.host}:{self.port}: {exc}") from exc
        except OSError as exc:  # refused, unreachable, a name that does not resolve, a TLS failure
            connection.close()
            raise httpx.ConnectError(f"connecting to {self.host}:{self.port}: {exc}") from exc
        assert connection.sock is not None
        # Headers and body leave in two writes: without this, Nagle's algorithm would hold the body
        # back until the server's delayed ACK.
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        with self._lock:
            self._open.discard(connection)
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None


def _readable(sock: socket.socket) -> bool:
    """Whether an idle socket has something to read: the peer's close (EOF) or stray bytes."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)

"""A minimal HTTP/1.1 keep-alive client on asyncio streams, for load generators.

Why not httpx: on this 2-core machine the load generator shares the CPU with the Board server
and PostgreSQL, so every millisecond it spends is taken from what it measures. This client does
one thing: POST a JSON body on a persistent connection and read the answer (``Content-Length``
or chunked). One request at a time per connection (no pipelining); a connection that fails, is
cancelled mid-request or is closed by the server is dropped and reopened by the next call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


class ConnectionLost(Exception):
    """No (complete) answer: the connection failed, was refused or was closed mid-answer."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    retry_after: float | None = None


class Connection:
    """One keep-alive connection to ``host:port``, with a bearer token on every request."""

    def __init__(self, host: str, port: int, token: str):
        self.host, self.port = host, port
        self._head = (
            f"Host: {host}:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        ).encode()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> Answer:
        try:
            if self._reader is None or self._writer is None:
                self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            reader, writer = self._reader, self._writer
            writer.write(
                b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (path.encode(), self._head, len(body), body)
            )
            await writer.drain()
            answer, keep = await _read_answer(reader)
        except (OSError, EOFError, ValueError, IndexError, asyncio.LimitOverrunError) as exc:
            self.close()
            raise ConnectionLost(f"{type(exc).__name__}: {exc}") from exc
        except BaseException:  # cancelled (a timeout) mid-request: the stream's state is unknown
            self.close()
            raise
        if not keep:
            self.close()
        return answer

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


async def _read_answer(reader: asyncio.StreamReader) -> tuple[Answer, bool]:
    """The status, body and Retry-After of one response; and whether the connection stays open."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    version, status = lines[0].split(b" ", 2)[:2]
    length: int | None = None
    chunked = False
    keep = version == b"HTTP/1.1"
    retry_after: float | None = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            keep = b"close" not in value.lower()
        elif name == b"retry-after":
            try:
                retry_after = float(value)
            except ValueError:
                retry_after = None
    if chunked:
        body = await _read_chunked(reader)
    elif length is not None:
        body = await reader.readexactly(length)
    else:  # neither: the body runs to the end of the connection
        body, keep = await reader.read(), False
    return Answer(int(status), body, retry_after), keep


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, then the empty line
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)

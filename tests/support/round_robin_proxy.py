"""A round-robin TCP proxy for tests that put several Board processes behind one address, as a
load balancer without sticky sessions does.

Each accepted connection goes to the next upstream in turn; an upstream that refuses the
connection (a process that died) is skipped for the next one, as a balancer's passive health
check would. Bytes are copied both ways untouched, so a websocket upgrade passes through like any
other request and stays on the process that accepted it for the life of the socket.

It runs its own event loop in a daemon thread (the tests around it are synchronous) and records,
per connection, which upstream served it and the request line the client sent first, so a test
can tell which process a browser's page or live socket reached.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from dataclasses import dataclass, field

CONNECT_TIMEOUT = 5.0


@dataclass
class Routed:
    """One client connection: the upstream it reached and the first request line it sent."""

    upstream: int | None = None
    request_line: str = ""
    websocket: bool = False


@dataclass
class RoundRobinProxy:
    upstreams: list[tuple[str, int]]
    host: str = "127.0.0.1"
    port: int = 0
    routed: list[Routed] = field(default_factory=list)

    def __post_init__(self):
        self._turn = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> RoundRobinProxy:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run():
            self._loop = asyncio.new_event_loop()
            try:
                self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, self.host, self.port))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="round-robin-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"the proxy did not start: {failure}")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown():
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
        self._loop = None

    def websockets(self, path: str, *, since: int = 0) -> list[Routed]:
        """The websocket upgrades to ``path`` among the connections from the ``since``-th on."""
        return [r for r in list(self.routed)[since:] if r.websocket and r.request_line.split(" ")[1:2] == [path]]

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        record = Routed()
        self.routed.append(record)
        first = next(self._turn)
        upstream = None
        try:
            for step in range(len(self.upstreams)):
                index = (first + step) % len(self.upstreams)
                try:
                    upstream = await asyncio.wait_for(asyncio.open_connection(*self.upstreams[index]), CONNECT_TIMEOUT)
                except (TimeoutError, OSError):
                    continue
                record.upstream = index
                break
            if upstream is None:
                return  # nobody is up: the client sees its connection closed
            up_reader, up_writer = upstream
            await asyncio.gather(
                self._pipe(client_reader, up_writer, record),
                self._pipe(up_reader, client_writer, None),
                return_exceptions=True,
            )
        finally:
            self._tasks.discard(task)
            for writer in (client_writer, upstream[1] if upstream else None):
                if writer is not None:
                    writer.close()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Routed | None) -> None:
        """Copy until one side ends, then close the other: a killed upstream must not leave its
        client waiting on a half-open connection (closing a stream's transport ends its reader
        too, so the copy the other way stops as well)."""
        try:
            while data := await reader.read(65536):
                if record is not None and not record.request_line:
                    head = data.decode("latin-1")
                    record.request_line = head.split("\r\n", 1)[0]
                    record.websocket = "upgrade: websocket" in head.lower()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

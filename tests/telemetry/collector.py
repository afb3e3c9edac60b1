"""A minimal OTLP/HTTP trace receiver for tests: a real Board exports its spans here (protobuf,
``POST /v1/traces``), and the test reads them back as plain records."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class Received:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict
    links: tuple[tuple[str, str], ...]  # (trace id, span id)
    service: str = ""


def _value(any_value):
    which = any_value.WhichOneof("value")
    return getattr(any_value, which) if which else None


@dataclass
class Collector:
    url: str = ""
    spans: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: ExportTraceServiceRequest) -> None:
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            Received(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                kind=span.kind,
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                links=tuple((link.trace_id.hex(), link.span_id.hex()) for link in span.links),
                                service=str(resource.get("service.name", "")),
                            )
                        )

    def named(self, name: str) -> list[Received]:
        with self.lock:
            return [s for s in self.spans if s.name == name]

    def wait_for(self, name: str, within: float = 15.0) -> Received:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = self.named(name)
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError(f"no span {name!r} arrived; got {sorted({s.name for s in self.spans})}")


def start() -> tuple[Collector, ThreadingHTTPServer]:
    collector = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            collector.add(request)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    return collector, server

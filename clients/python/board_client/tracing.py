"""OpenTelemetry in the client, optional: ``pip install 'board-client[otel]'`` (docs/clients.md).

With ``opentelemetry-api`` importable, every call carries the current span's context as the W3C
``traceparent`` header (the server's span of the call is its child; ``create_for`` and
``create_batch`` keep it with the todo, ``complete`` and ``fail`` on the attempt), and the worker
runs each handler in a ``process <queue>`` span that is a **child** of the todo's stored
context: one todo is one logical operation, from its producer to its worker. Without the
package, or without an SDK configured, all of this is a no-op.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TRACER_NAME = "board-client"
_api: Any = None  # (trace module, propagator), False when opentelemetry-api is not installed


def _otel() -> Any:
    global _api
    if _api is None:
        try:
            from opentelemetry import trace
            from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
        except ImportError:
            _api = False
        else:
            _api = (trace, TraceContextTextMapPropagator())
    return _api or None


def current_traceparent() -> str | None:
    """The current span's W3C traceparent, or None (no span, or no OpenTelemetry)."""
    api = _otel()
    if api is None:
        return None
    trace, propagator = api
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    propagator.inject(carrier)
    return carrier.get("traceparent")


def headers() -> dict[str, str]:
    """The ``traceparent`` header of the current span, if there is one."""
    traceparent = current_traceparent()
    return {"traceparent": traceparent} if traceparent else {}


@contextmanager
def processing(todo: Any, queue: str) -> Iterator[Any]:
    """The worker's span around one todo's handler and its report: ``process <queue>``, a child
    of the todo's ``traceparent`` (else of the current context). Yields the span, or None."""
    api = _otel()
    if api is None:
        yield None
        return
    trace, propagator = api
    stored = todo.get("traceparent") if isinstance(todo, dict) else None
    parent = propagator.extract({"traceparent": stored}) if stored else None
    attributes = {
        "messaging.system": "board",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": queue,
        "messaging.message.id": str(todo.get("id")) if isinstance(todo, dict) else "",
    }
    tracer = trace.get_tracer(TRACER_NAME)
    with tracer.start_as_current_span(
        f"process {queue}", context=parent, kind=trace.SpanKind.CONSUMER, attributes=attributes
    ) as span:
        yield span


def failed(span: Any, summary: str | None) -> None:
    """Mark a processing span as failed (the handler's failure is reported, not raised)."""
    if span is None:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, (summary or "failed")[:200]))

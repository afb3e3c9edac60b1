"""OpenTelemetry traces (docs/telemetry.md): set up once per process, near-free when off.

Tracing is on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
is set: :func:`setup` installs the SDK's provider with a batching OTLP/HTTP exporter, configured
by the standard ``OTEL_*`` variables. Otherwise nothing is installed, :data:`STATE` says off, and
every helper here returns at its first line, so a process without an endpoint pays one attribute
read per statement and per verb. Tests and the bench hand a provider of their own to :func:`use`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from todos.core.store.inputs import traceparent as checked_traceparent

TRACER_NAME = "board"
DEFAULT_SERVICE_NAME = "board"
MESSAGING_SYSTEM = "board"
# Where a statement's name comes from: the outermost function of these packages that built it.
STATEMENT_PACKAGES = ("todos.core.store.", "todos.core.selectors.")
# Modules the SQL catalog names otherwise (todos/ops/sql_catalog.py).
CATALOG_MODULES = {"selectors.agent_api": "selectors.agent"}
_PROPAGATOR = TraceContextTextMapPropagator()


class _State:
    """The process's tracer, or None while tracing is off."""

    __slots__ = ("tracer", "provider")

    def __init__(self) -> None:
        self.tracer: Tracer | None = None
        self.provider: Any = None


STATE = _State()


def endpoint_configured(environ: Mapping[str, str] = os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def setup(environ: Mapping[str, str] = os.environ) -> bool:
    """Install the SDK with its OTLP/HTTP exporter if an endpoint is configured; True if it did.
    Called at start-up (the app's ``ready``); a second call changes nothing."""
    if STATE.tracer is not None:
        return True
    provider = build_provider(environ)
    if provider is None:
        return False
    trace.set_tracer_provider(provider)
    use(provider)
    return True


def build_provider(environ: Mapping[str, str] = os.environ) -> Any:
    """The SDK's ``TracerProvider`` exporting over OTLP/HTTP (the exporter reads the standard
    ``OTEL_EXPORTER_OTLP_*`` variables), or None without an endpoint."""
    if not endpoint_configured(environ):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes = {}
    named = "OTEL_SERVICE_NAME" in environ or "service.name=" in environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        attributes["service.name"] = DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def use(provider: Any) -> None:
    """Trace with ``provider`` (an SDK ``TracerProvider``), or stop tracing (None)."""
    STATE.provider = provider
    STATE.tracer = provider.get_tracer(TRACER_NAME) if provider is not None else None


def enabled() -> bool:
    return STATE.tracer is not None


# --- spans ---------------------------------------------------------------------------------------


def context_of(traceparent: str | None) -> Any:
    """The OpenTelemetry context a W3C ``traceparent`` names (None: no parent, or not one)."""
    if not traceparent:
        return None
    try:
        checked_traceparent(traceparent)
    except Exception:  # noqa: BLE001 - a malformed header is not a parent (W3C: ignore it)
        return None
    return _PROPAGATOR.extract({"traceparent": traceparent})


def link_to(traceparent: str | None) -> list[Link]:
    context = context_of(traceparent)
    if context is None:
        return []
    span_context = trace.get_current_span(context).get_span_context()
    return [Link(span_context)] if span_context.is_valid else []


@contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, Any] | None = None,
    parent: str | None = None,
    links: Sequence[Link] = (),
) -> Iterator[Span | None]:
    """A span named ``name`` (None when tracing is off), a child of ``parent`` (a traceparent)
    when one is given, else of the current span. An exception out of it is recorded on it."""
    tracer = STATE.tracer
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(
        name, context=context_of(parent), kind=kind, attributes=attributes, links=links
    ) as current:
        yield current


def traceparent_of(current: Span | None) -> str | None:
    """The W3C traceparent of ``current`` (what a producer or a worker sends on)."""
    if current is None:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(current))
    return carrier.get("traceparent")


def trace_id_of(traceparent: str | None) -> str | None:
    """The 32-hex trace id inside a traceparent (the Board shows and links it)."""
    if not traceparent or traceparent.count("-") != 3:
        return None
    return traceparent.split("-")[1]


# --- statements ----------------------------------------------------------------------------------


def statement_name(depth: int) -> str:
    """The catalog name (``store.agent.claim_next``) of the statement being built ``depth`` frames
    up: the outermost store or selector function on the stack, as the SQL catalog names its
    entries (todos/ops/sql_catalog.py; a variant's suffix is not known here)."""
    frame = sys._getframe(depth + 1)
    found = frame
    while frame is not None and frame.f_globals.get("__name__", "").startswith(STATEMENT_PACKAGES):
        found = frame
        frame = frame.f_back
    module = found.f_globals.get("__name__", "")
    for prefix in ("todos.core.", "todos."):
        if module.startswith(prefix):
            module = module[len(prefix) :]
            break
    return f"{CATALOG_MODULES.get(module, module)}.{found.f_code.co_name}"


def statement_attributes(name: str) -> dict[str, str]:
    return {"db.system": "postgresql", "db.system.name": "postgresql", "db.operation.name": name}

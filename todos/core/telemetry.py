"""OpenTelemetry traces (docs/telemetry.md): set up once per process, near-free when off.

Tracing is on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
is set: :func:`setup` installs the SDK's provider with a batching OTLP/HTTP exporter (or none:
``OTEL_TRACES_EXPORTER``), configured by the standard ``OTEL_*`` variables. Otherwise nothing is
installed, :data:`STATE` says off, and every helper here returns at its first line, so a process
without an endpoint pays one attribute read per statement and per verb. Tests hand a provider of
their own to :func:`use`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from opentelemetry import context as context_api
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


# ``OTEL_TRACES_EXPORTER``'s values here: the standard variable's, as far as Board ships an exporter.
EXPORTERS = ("otlp", "none")


def build_provider(environ: Mapping[str, str] = os.environ) -> Any:
    """The SDK's ``TracerProvider`` with a batch span processor, or None without an endpoint.
    Its exporter is ``OTEL_TRACES_EXPORTER``'s: ``otlp`` (the default) sends over OTLP/HTTP (the
    exporter reads the standard ``OTEL_EXPORTER_OTLP_*`` variables); ``none`` makes and batches
    every span and sends none (what the tracing bench's "on, no export" server measures)."""
    if not endpoint_configured(environ):
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = _exporter(environ)
    attributes = {}
    named = "OTEL_SERVICE_NAME" in environ or "service.name=" in environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        attributes["service.name"] = DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _exporter(environ: Mapping[str, str]) -> Any:
    chosen = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() or "otlp"
    if chosen == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if chosen == "none":
        return _Discard()
    raise ImproperlyConfigured(  # refused at start, naming the variable
        f"OTEL_TRACES_EXPORTER must be one of {', '.join(EXPORTERS)} (one exporter), got {chosen[:64]!r}"
    )


class _Discard:
    """A span exporter that sends nothing (``OTEL_TRACES_EXPORTER=none``)."""

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


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


def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, Any] | None = None,
    parent: str | None = None,
    links: Sequence[Link] = (),
) -> AbstractContextManager[Span | None]:
    """A span named ``name`` (None when tracing is off), a child of ``parent`` (a traceparent)
    when one is given, else of the current span, and the current span inside the block. An
    exception out of it is recorded on it."""
    tracer = STATE.tracer
    if tracer is None:
        return _OFF
    return _Current(tracer.start_span(name, context=context_of(parent), kind=kind, attributes=attributes, links=links))


class _Current:
    """Makes a started span the current one for a block, then ends it: what the SDK's
    ``start_as_current_span`` does, without its two generator-based context managers."""

    __slots__ = ("span", "token")

    def __init__(self, started: Span) -> None:
        self.span = started

    def __enter__(self) -> Span:
        self.token = context_api.attach(trace.set_span_in_context(self.span))
        return self.span

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            context_api.detach(self.token)
        finally:
            # the SDK span's own exit records an exception (and the error status), then ends it
            self.span.__exit__(exc_type, exc, tb)


_OFF = nullcontext(None)


def statement_span(name: str) -> AbstractContextManager[Any]:
    """The client span of one statement (the caller knows tracing is on). It has no children, so
    it never becomes the current span: started and ended, no context attached or detached; its
    attributes are one dict per catalog name."""
    tracer = STATE.tracer
    if tracer is None:
        return _OFF
    return tracer.start_span(name, kind=SpanKind.CLIENT, attributes=statement_attributes(name))


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


# A statement span's attributes, one dict per catalog name (a fixed set: the statements the store
# and the selectors build); the SDK copies them into each span.
_STATEMENT_ATTRIBUTES: dict[str, dict[str, str]] = {}


def statement_attributes(name: str) -> dict[str, str]:
    found = _STATEMENT_ATTRIBUTES.get(name)
    if found is None:
        found = {"db.system": "postgresql", "db.system.name": "postgresql", "db.operation.name": name}
        _STATEMENT_ATTRIBUTES[name] = found
    return found

"""The Python client's traces (board_client/tracing.py): the active span's context as the
``traceparent`` header, the worker's span a child of the todo's context, and nothing at all
where OpenTelemetry's API is not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from opentelemetry.sdk.trace import TracerProvider

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_without_opentelemetry_the_client_traces_nothing_and_still_works():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if it were not installed: importing it fails
        from board_client import tracing
        assert tracing.current_traceparent() is None
        assert tracing.headers() == {}
        with tracing.processing({"id": "td_1", "traceparent": "PRODUCER"}, "q") as span:
            assert span is None
        tracing.failed(None, "x")
        print("ok")
        """
    ).replace("PRODUCER", PRODUCER)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_active_span_is_the_header_and_the_processing_span_is_the_todos_child():
    from board_client import tracing

    provider = TracerProvider()
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("outer") as outer:
        context = outer.get_span_context()
        expected = f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
        assert tracing.headers() == {"traceparent": expected}
    assert tracing.headers() == {}
    # the processing span's parent comes from the stored traceparent, not the current span
    from opentelemetry import trace

    previous = trace.get_tracer_provider()
    if not isinstance(previous, TracerProvider):  # the process has no SDK provider: a no-op span
        with tracing.processing({"id": "td_1", "traceparent": PRODUCER}, "q") as span:
            # without an SDK the stored context passes through unchanged (W3C propagation)
            assert tracing.current_traceparent() == PRODUCER
            assert span is not None

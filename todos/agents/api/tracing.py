"""A span per verb call, HTTP or MCP, with the messaging attributes of the queue verbs
(docs/telemetry.md, "Spans"). Attribute values are ids, names and counts: never a payload."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from todos.core import telemetry

# The messaging operation each queue verb is (OpenTelemetry's messaging conventions).
OPERATION_TYPES = {
    "create_for": "create",
    "create_batch": "create",
    "claim_next": "receive",
    "claim": "receive",
    "claim_batch": "receive",
    "complete": "settle",
    "fail": "settle",
    "release": "settle",
    "complete_batch": "settle",
}
# A settle verb's own traceparent field: the worker's context, linked from the verb's span.
SETTLE_CONTEXT_VERBS = frozenset({"complete", "fail"})


def verb_span(verb: str, transport: str, traceparent: str | None) -> AbstractContextManager[Any]:
    """The server span of one call: a child of the caller's ``traceparent`` header when it
    carries a valid one (W3C propagation), else a root."""
    name = verb[:64]
    return telemetry.span(
        name, kind=telemetry.SpanKind.SERVER, attributes=_attributes(name, transport), parent=traceparent
    )


# A verb span's opening attributes, one dict per verb and transport (the verb table's names and
# ``unknown_verb``: a fixed set); the SDK copies them into each span.
_ATTRIBUTES: dict[tuple[str, str], dict[str, str]] = {}


def _attributes(verb: str, transport: str) -> dict[str, str]:
    found = _ATTRIBUTES.get((verb, transport))
    if found is None:
        found = {"board.verb": verb, "board.transport": transport}
        if transport == "http":
            found |= {"http.request.method": "POST", "http.route": f"/api/v1/{verb}"}
        _ATTRIBUTES[(verb, transport)] = found
    return found


def describe(current: Any, verb: str, args: dict, output: dict) -> None:
    """Add what the call did to its span: the queue, the todo, the worker's context as a link."""
    if current is None:
        return
    operation = OPERATION_TYPES.get(verb)
    if operation is None:
        return
    # one call: the SDK takes the span's lock and checks the values once per call, not per attribute
    attributes: dict[str, Any] = {
        "messaging.system": telemetry.MESSAGING_SYSTEM,
        "messaging.operation.type": operation,
        "messaging.operation.name": verb,
    }
    todo = output.get("todo")
    if isinstance(todo, dict):
        attributes["messaging.destination.name"] = todo["queue"]
        attributes["messaging.message.id"] = todo["id"]
    for key in ("results", "todos"):
        if isinstance(output.get(key), list):
            attributes["messaging.batch.message_count"] = len(output[key])
    current.set_attributes(attributes)
    if verb in SETTLE_CONTEXT_VERBS:
        for link in telemetry.link_to(args.get("traceparent")):
            current.add_link(link.context, {"board.link": "worker"})
    elif verb == "complete_batch":
        contexts = {item.get("traceparent") for item in args.get("items") or () if isinstance(item, dict)}
        for traceparent in sorted(c for c in contexts if isinstance(c, str)):
            for link in telemetry.link_to(traceparent):
                current.add_link(link.context, {"board.link": "worker"})


def status(current: Any, code: int) -> None:
    if current is None:
        return
    current.set_attribute("http.response.status_code", code)
    if code >= 500:
        from opentelemetry.trace import Status, StatusCode

        current.set_status(Status(StatusCode.ERROR))

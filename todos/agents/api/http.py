"""The HTTP transport: ``POST /api/v1/<verb>`` with a JSON object, answered with a JSON object.

This module only parses, authenticates and maps errors; the verb table (``verbs.py``) does the
rest. The order of refusals is fixed so a client always learns the most basic problem first:
unknown verb (404) or wrong method (405), body too large (413), bad token (401), verb outside the
endpoint's scope (403), malformed JSON or arguments (400), then whatever the verb itself says.

Every response carries ``X-Request-Id``; an internal error is logged under that id with its
traceback and answered with the id only, never the details.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from todos.agents.api import openapi, tracing
from todos.agents.api.asgi import GONE_SCOPE_KEY
from todos.agents.api.auth import authenticate, authorize
from todos.agents.api.errors import STATUS, MethodNotAllowed, TooLarge, error_body, internal_message, new_request_id
from todos.agents.api.handlers import Call
from todos.agents.api.verbs import VERBS, run
from todos.core import telemetry
from todos.core.admission import prioritised
from todos.core.errors import Invalid, NotFound, StoreError
from todos.core.store.inputs import JSON_MAX_DEPTH
from todos.core.unavailable import describe as describe_unavailable

logger = logging.getLogger("todos.agents.api")

JSON_WHITESPACE = b" \t\r\n"  # RFC 8259's; bytes.strip() would also take \x0b and \x0c


def json_response(body: dict, status: int, request_id: str) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["X-Request-Id"] = request_id
    response["Cache-Control"] = "no-store"
    return response


def error_response(exc: StoreError, request_id: str) -> JsonResponse:
    retry_after = getattr(exc, "retry_after", None)
    if exc.code == "internal":
        logger.error("internal error in request %s: %s", request_id, exc.message)
        message = internal_message(request_id)
    else:
        message = exc.message
        if exc.code == "unavailable":
            logger.warning("database unavailable in request %s: %s", request_id, describe_unavailable(exc))
    response = json_response(
        error_body(exc.code, message, retry_after=retry_after), STATUS.get(exc.code, 500), request_id
    )
    if exc.code == "unauthorized":
        response["WWW-Authenticate"] = 'Bearer realm="board"'
    elif exc.code == "method_not_allowed":
        response["Allow"] = "POST"
    elif retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def read_body(request: HttpRequest) -> bytes:
    """The request body, refused with ``too_large`` on its declared length and on what is read."""
    limit = settings.BOARD_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    try:
        declared_length = int(declared)
    except ValueError:
        raise Invalid("Content-Length", "must be a number of bytes") from None
    if declared_length > limit:
        raise TooLarge(f"the body is {declared_length} bytes; the limit is {limit}")
    raw = request.read(limit + 1)
    if len(raw) > limit:
        raise TooLarge(f"the body is over the limit of {limit} bytes")
    return raw


class _BadJSON(ValueError):
    pass


def _reject_constant(name: str):
    raise _BadJSON(f"{name} is not JSON")


class OutOfRange:
    """A number in the body that no field could hold: more digits than Python converts
    (``sys.get_int_max_str_digits``) or a float past ±1.8e308. The parser returns this marker
    instead of failing, so the error can name the field the number was sent in."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _integer(text: str) -> int | OutOfRange:
    try:
        return int(text)
    except ValueError:  # past the int conversion limit
        return OutOfRange(text)


def _finite(text: str) -> float | OutOfRange:
    value = float(text)
    return value if math.isfinite(value) else OutOfRange(text)


def parse_arguments(raw: bytes) -> dict:
    """A JSON object (an empty body is ``{}``); anything else is ``invalid`` naming ``body``, or
    the top-level field that holds the problem (a number out of range, a lone surrogate, nesting
    too deep for the parser)."""
    if not raw.strip(JSON_WHITESPACE):
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid("body", f"must be UTF-8 encoded JSON (byte {exc.start} is not UTF-8)") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite, parse_int=_integer)
    except _BadJSON as exc:
        raise Invalid("body", f"is not valid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise Invalid("body", f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise Invalid(_deepest_field(text), f"must not be nested more than {JSON_MAX_DEPTH} levels deep") from None
    if not isinstance(value, dict):
        raise Invalid("body", "must be a JSON object")
    for key, item in value.items():
        _check_values(item, key[:64])
    return value


def _check_values(value, field: str) -> None:
    """Refuse what JSON allows but no field can hold: numbers out of range and lone UTF-16
    surrogates (``"\\ud800"``, which PostgreSQL cannot store). Walks iteratively, so depth
    cannot blow the stack; the nesting limit itself is the store's (``inputs.require_depth``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            _encodable(item, field)
        elif isinstance(item, OutOfRange):
            raise Invalid(field, "is a number out of range (more than 4300 digits, or past ±1.8e308)")
        elif isinstance(item, dict):
            for key, sub in item.items():
                _encodable(key, field)
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)


def _encodable(text: str, field: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid(field, "contains text that is not valid Unicode (a lone surrogate)") from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def _deepest_field(text: str) -> str:
    """The top-level field whose value nests too deep for the parser (``body`` if the body
    itself does): found by scanning strings and brackets, without recursion."""
    depth, key, previous = 0, None, None
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > JSON_MAX_DEPTH + 1:
                break
        elif token in "]}":
            depth -= 1
        elif token == ":" and depth == 1 and previous is not None and previous.startswith('"'):
            key = previous
        previous = token
    if depth <= 1 or key is None:
        return "body"
    try:
        return json.loads(key)[:64]
    except ValueError:
        return "body"


@csrf_exempt
async def verb_view(request: HttpRequest, verb: str) -> JsonResponse:
    """One verb call; while tracing is on, in its server span (a child of the ``traceparent``
    header's context: docs/telemetry.md)."""
    traceparent = request.META.get("HTTP_TRACEPARENT")
    if not telemetry.enabled():
        return await _verb_view(request, verb, traceparent, None)
    # a verb outside the table is one span name, not one per path an agent mistyped
    with tracing.verb_span(verb if verb in VERBS else "unknown_verb", "http", traceparent) as span:
        response = await _verb_view(request, verb, traceparent, span)
        tracing.status(span, response.status_code)
        return response


async def _verb_view(request: HttpRequest, verb: str, traceparent: str | None, span) -> JsonResponse:
    request_id = new_request_id()
    try:
        found = VERBS.get(verb)
        if found is None:
            raise NotFound(f"no such verb: {verb[:64]!r}; see /api/v1/openapi.json")
        if request.method != "POST":
            raise MethodNotAllowed(f"{verb} takes POST with a JSON object body, not {request.method}")
        raw = read_body(request)
        with prioritised(found.priority):  # the credential's lookup queues as the verb does
            credential = await authenticate(request.META.get("HTTP_AUTHORIZATION"))
        authorize(found.name, found.granted_by, credential)
        args = parse_arguments(raw)
        gone = getattr(request, "scope", {}).get(GONE_SCOPE_KEY)
        output = await run(found, Call(credential=credential, gone=gone, traceparent=traceparent), args)
        tracing.describe(span, found.name, args, output)
        return json_response(output, found.status(output), request_id)
    except StoreError as exc:
        return error_response(exc, request_id)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("internal error in request %s (POST /api/v1/%s)", request_id, verb[:64])
        return json_response(error_body("internal", internal_message(request_id)), 500, request_id)


@csrf_exempt
async def openapi_view(request: HttpRequest) -> JsonResponse:
    """The OpenAPI 3.1 document of this API (no token needed: it describes, it grants nothing)."""
    request_id = new_request_id()
    if request.method not in ("GET", "HEAD"):
        response = error_response(MethodNotAllowed("the OpenAPI document is read with GET"), request_id)
        response["Allow"] = "GET, HEAD"
        return response
    response = json_response(openapi.document(), 200, request_id)
    response["Cache-Control"] = "public, max-age=60"
    return response

"""The store's input rules (docs/lifecycle.md, "Inputs the store cleans or rejects").

Cleaning never loses a verdict: a long summary is cut, not refused. Anything malformed raises
:class:`~todos.core.errors.Invalid` naming the field, before a single statement runs.

Text comes in two kinds. *One-line* fields (queue names, ids, titles, labels, keys) refuse every
control character (C0, DEL, C1): a newline in a queue name is a typo or an attack, never a name.
*Prose* (summaries, notes) and JSON documents (payload, result) may hold newlines and tabs, but
never NUL, which PostgreSQL cannot store in ``text`` or ``jsonb``. JSON documents are also limited
to :data:`JSON_MAX_DEPTH` levels of nesting, so nothing downstream (``json.dumps``, the driver,
templates) can run out of stack on them.

The patterns here are written once for both Python and the OpenAPI document (JSON Schema uses
ECMA-262 regular expressions): they use only syntax the two agree on, and Python matches them
whole (``fullmatch``), as ECMA's ``$`` would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import secrets
import unicodedata
from typing import Any, LiteralString

from django.conf import settings
from psycopg.types.json import Jsonb

from todos.core.compose import TODO_STATES
from todos.core.errors import Invalid

SUMMARY_MAX_BYTES = 2048
CLAIMANT_MAX_BYTES = 128
ARTIFACT_MAX_BYTES = 512
TITLE_MAX_CHARS = 500
LABEL_MAX_CHARS = 200
KEY_MAX_CHARS = 255
JSON_MAX_BYTES = 1024 * 1024
LEASE_TTL_MAX = 86400
DEFAULT_LEASE_MIN = 60
MAX_ATTEMPTS_RANGE = (1, 100)
PRIORITY_RANGE = (-32768, 32767)
JSON_MAX_DEPTH = 64
QUEUE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
TOKEN_BYTES = 16

# Control characters: C0, DEL and C1 (Unicode category Cc).
CONTROL = r"\u0000-\u001f\u007f-\u009f"
ONE_LINE_PATTERN: LiteralString = f"^[^{CONTROL}]*$"
# Not blank: at least one character that is neither whitespace nor a control character (U+FEFF
# is named because ECMA counts it as whitespace and Python does not).
NOT_BLANK_LINE_PATTERN = rf"^[^{CONTROL}]*[^\s\ufeff{CONTROL}][^{CONTROL}]*$"
# A lease token is base64url; anything printable that is not one is a plain fence mismatch.
PRINTABLE_ASCII_PATTERN: LiteralString = "^[!-~]*$"
_CONTROL_RE = re.compile(f"[{CONTROL}]")
_NOT_BLANK_LINE_RE = re.compile(NOT_BLANK_LINE_PATTERN)


def require_int(field: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(field, f"must be an integer from {lo} to {hi}")
    if not lo <= value <= hi:
        raise Invalid(field, f"must be from {lo} to {hi}, got {value}")
    return value


def optional_int(field: str, value: Any, lo: int, hi: int) -> int | None:
    return None if value is None else require_int(field, value, lo, hi)


def require_str(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(field, "must be a string")
    if "\x00" in value:
        raise Invalid(field, "must not contain NUL characters")
    _require_utf8(field, value)
    return value


def require_line(field: str, value: Any) -> str:
    """A one-line string: no control characters at all (NUL, newline, tab, escape, DEL, C1)."""
    value = require_str(field, value)
    if _CONTROL_RE.search(value):
        raise Invalid(field, "must not contain control characters (newlines, tabs, NUL, …)")
    return value


def _require_utf8(field: str, value: str) -> None:
    """A lone surrogate (``"\\ud800"`` decoded from JSON) has no UTF-8 form: PostgreSQL would
    refuse it deep inside the driver, so it is refused here, naming the field."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid(field, "must be valid Unicode text (it contains a lone surrogate)") from None


def title(value: Any) -> str:
    value = require_line("title", value)
    if not _NOT_BLANK_LINE_RE.fullmatch(value):
        raise Invalid("title", "must not be empty")
    if len(value) > TITLE_MAX_CHARS:
        raise Invalid("title", f"must be at most {TITLE_MAX_CHARS} characters, got {len(value)}")
    return value


def queue(value: Any, field: str = "queue") -> str:
    value = require_line(field, value)
    if not QUEUE_RE.fullmatch(value):
        raise Invalid(
            field,
            "must be 1 to 128 characters of letters, digits and . _ : / - (starting with a letter or digit)",
        )
    return value


def queues(values: Any, field: str = "queues") -> list[str]:
    if not isinstance(values, (list, tuple)):
        raise Invalid(field, "must be a list of queue names")
    return [queue(v, field) for v in values]


def label(field: str, value: Any, max_chars: int = LABEL_MAX_CHARS) -> str | None:
    """Optional short text (source, kind, assignee): empty means absent."""
    if value is None:
        return None
    value = require_line(field, value)
    if value == "":
        return None
    if len(value) > max_chars:
        raise Invalid(field, f"must be at most {max_chars} characters, got {len(value)}")
    return value


def idempotency_key(value: Any) -> str | None:
    return label("idempotency_key", value, KEY_MAX_CHARS)


def state(value: Any, field: str = "state") -> str:
    if value not in TODO_STATES:
        raise Invalid(field, f"must be one of {', '.join(TODO_STATES)}")
    return value


def json_value(field: str, value: Any) -> Jsonb | None:
    """A JSON document (payload, result): at most 1 MiB encoded, at most :data:`JSON_MAX_DEPTH`
    levels of arrays and objects, no NaN, no NUL characters (in a value or a key)."""
    if value is None:
        return None
    require_depth(field, value)
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise Invalid(field, f"must be JSON ({exc.__class__.__name__})") from None
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError:
        raise Invalid(field, "must be valid Unicode text (it contains a lone surrogate)") from None
    if size > JSON_MAX_BYTES:
        raise Invalid(field, f"must be at most {JSON_MAX_BYTES} bytes of JSON")
    if _JSON_NUL.search(encoded):
        # jsonb cannot store U+0000 (in a value or a key)
        raise Invalid(field, "must not contain NUL characters")
    return Jsonb(value, dumps=lambda _: encoded)


def require_depth(field: str, value: Any, limit: int = JSON_MAX_DEPTH) -> None:
    """Refuse arrays and objects nested more than ``limit`` deep (``[[1]]`` is two levels).

    Walks with an explicit stack, so the check itself cannot exhaust Python's."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > limit:
            raise Invalid(field, f"must not be nested more than {limit} levels deep")
        stack.extend((child, depth + 1) for child in children)


# The escape ``\u0000`` in encoded JSON, but not the text ``\\u0000`` (an escaped backslash
# followed by "u0000"): an even run of backslashes, then the escape.
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def priority(value: Any) -> int:
    return 0 if value is None else require_int("priority", value, *PRIORITY_RANGE)


def max_attempts(value: Any) -> int:
    return 5 if value is None else require_int("max_attempts", value, *MAX_ATTEMPTS_RANGE)


# A run-time limit (docs/lifecycle.md, "Run-time limits"): one second to seven days.
RUN_TIME_LIMIT_RANGE = (1, 604800)


def timeout_seconds(value: Any, field: str = "timeout_seconds") -> int | None:
    """A todo's run-time limit, or a queue's default one; None is no limit."""
    return optional_int(field, value, *RUN_TIME_LIMIT_RANGE)


def lease_ttl(value: Any, endpoint_default: int | None = None) -> int:
    """Per call wins (1..86400), then the endpoint's default, then the server's."""
    if value is not None:
        return require_int("lease_ttl_seconds", value, 1, LEASE_TTL_MAX)
    if endpoint_default is not None:
        return endpoint_default
    return settings.BOARD_DEFAULT_LEASE_SECONDS


def default_lease(value: Any) -> int | None:
    return optional_int("default_lease_ttl_seconds", value, DEFAULT_LEASE_MIN, LEASE_TTL_MAX)


def cut_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` of UTF-8 at a character boundary."""
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text, False
    return encoded[:max_bytes].decode("utf-8", errors="ignore"), True


def summary(value: Any) -> tuple[str | None, bool]:
    """Cut to 2048 bytes, never rejected for length: a verdict must not be lost to long prose."""
    if value is None:
        return None, False
    value = require_str("summary", value)
    if value == "":
        return None, False
    return cut_utf8(value, SUMMARY_MAX_BYTES)


def cut_utf8_tail(text: str, max_bytes: int) -> tuple[str, bool]:
    """Keep the last ``max_bytes`` of UTF-8 of ``text``, cut at a character boundary: the end of a
    traceback is what names the failure."""
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text, False
    # the bytes of a character cut in two at the start are continuation bytes: "ignore" drops them
    return encoded[-max_bytes:].decode("utf-8", errors="ignore"), True


# --- an attempt's error object (docs/api.md, "The error object") ----------------------------

ERROR_TYPE_MAX_BYTES = 200
ERROR_MESSAGE_MAX_BYTES = 4096
ERROR_TRACEBACK_MAX_BYTES = 64 * 1024
ERROR_FIELDS = ("type", "message", "traceback")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _error_text(name: str, value: Any) -> str:
    """One field of an error object, cleaned, never refused for its content: NUL characters
    (which PostgreSQL cannot store) are dropped and lone surrogates become U+FFFD."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"error.{name}", "must be a string")
    return _LONE_SURROGATE.sub("\ufffd", value.replace("\x00", ""))


def error_object(value: Any) -> Jsonb | None:
    """Why an attempt failed, ``{type, message, traceback}`` (all optional strings), as stored:
    the empty fields left out, ``truncated`` saying whether anything was cut. An error report is
    cut, never refused for its length: type keeps its first 200 bytes, message its first 4 KB,
    traceback its last 64 KB. None, ``{}`` or only empty fields mean no error (None). Malformed
    (not an object, a field not a string, an unknown field) is ``Invalid`` naming ``error.<field>``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise Invalid("error", "must be an object with type, message and traceback (strings)")
    unknown = sorted(str(key) for key in value if key not in ERROR_FIELDS)
    if unknown:
        raise Invalid(f"error.{unknown[0][:64]}", "is not a known field (type, message, traceback)")
    texts = {name: _error_text(name, value.get(name)) for name in ERROR_FIELDS}
    cuts = {
        "type": cut_utf8(texts["type"], ERROR_TYPE_MAX_BYTES),
        "message": cut_utf8(texts["message"], ERROR_MESSAGE_MAX_BYTES),
        "traceback": cut_utf8_tail(texts["traceback"], ERROR_TRACEBACK_MAX_BYTES),
    }
    stored: dict[str, Any] = {name: text for name, (text, _) in cuts.items() if text}
    if not stored:
        return None
    stored["truncated"] = any(cut for _, cut in cuts.values())
    return Jsonb(stored)


def claimant(value: Any) -> str | None:
    """A label for humans: cleaned, never refused for its content (control characters, NUL
    included, and lone surrogates are dropped; the rest is cut to 128 bytes)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid("claimant", "must be a string")
    value = "".join(ch for ch in value if unicodedata.category(ch) not in ("Cc", "Cs"))
    value, _ = cut_utf8(value, CLAIMANT_MAX_BYTES)
    return value or None


# An https:// URL with a host (RFC 3986 characters, printable ASCII only), the scheme in any case.
_HTTPS_URL = (
    r"[Hh][Tt][Tt][Pp][Ss]://(?:[A-Za-z0-9._~%!$&'()*+,;=:-]*@)?"
    r"(?:[A-Za-z0-9._~%!$&'()*+,;=-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?(?:[/?#][!-~]*)?"
)


def artifact_pattern(schemes=None) -> str:
    """The artifact rule as one regular expression (Python and ECMA alike): an https:// URL, or
    ``scheme://…`` for a scheme the operator allows (``BOARD_ARTIFACT_SCHEMES``, lowercase)."""
    schemes = settings.BOARD_ARTIFACT_SCHEMES if schemes is None else schemes
    handles = "".join(f"|{_literal(s.lower())}://[!-~]+" for s in schemes if s.lower() != "https")
    return f"^(?:{_HTTPS_URL}{handles})$"


def _literal(scheme: str) -> str:
    """A scheme name as a regex literal both dialects read alike (scheme characters: a-z 0-9 + . -)."""
    return "".join("\\" + ch if ch in ".+" else ch for ch in scheme)


def artifact(value: Any) -> str | None:
    """An ``https://`` URL with a host, or ``scheme://…`` for a scheme the operator allows.

    The error never echoes the value: artifacts can carry signed URLs.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Invalid("artifact", "must be a string")
    if len(value.encode()) > ARTIFACT_MAX_BYTES:
        raise Invalid("artifact", f"must be at most {ARTIFACT_MAX_BYTES} bytes")
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in value):
        raise Invalid("artifact", "must not contain whitespace or control characters")
    if re.fullmatch(artifact_pattern(), value):
        return value
    allowed = ", ".join(["https"] + [s for s in settings.BOARD_ARTIFACT_SCHEMES])
    raise Invalid("artifact", f"must be a URL or handle with one of the schemes: {allowed} (printable ASCII)")


def todo_id(value: Any, field: str = "id") -> str:
    value = require_line(field, value)
    if not value or len(value) > 64:
        raise Invalid(field, "must be a todo id (td_…)")
    return value


def todo_ids(values: Any, field: str = "ids") -> list[str]:
    if not isinstance(values, (list, tuple)):
        raise Invalid(field, "must be a list of todo ids")
    return [todo_id(v, field) for v in values]


def note(value: Any, field: str = "note", max_chars: int = 2000) -> str | None:
    if value is None:
        return None
    value = require_str(field, value).strip()
    if len(value) > max_chars:
        raise Invalid(field, f"must be at most {max_chars} characters")
    return value or None


# --- The lease-token fence ------------------------------------------------------------------


def new_lease_token() -> tuple[str, bytes]:
    """16 random bytes: the base64url token (shown once) and the SHA-256 the store keeps."""
    raw = secrets.token_bytes(TOKEN_BYTES)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode(), hashlib.sha256(raw).digest()


def lease_token_hash(token: Any) -> bytes | None:
    """The digest a presented token is compared with, in SQL. No token → NULL.

    A token that does not decode to 16 bytes still hashes (to something no attempt holds), so a
    malformed token is a plain fence mismatch (conflict), never a different answer.
    """
    if token is None:
        return None
    if not isinstance(token, str):
        raise Invalid("lease_token", "must be a string")
    if not re.fullmatch(PRINTABLE_ASCII_PATTERN, token):
        raise Invalid("lease_token", "must be printable ASCII (a lease token is base64url)")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, TypeError):
        raw = b""
    if len(raw) != TOKEN_BYTES:
        return hashlib.sha256(b"malformed:" + token.encode("utf-8", "replace")).digest()
    return hashlib.sha256(raw).digest()


def finite_number(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Invalid(field, "must be a number")
    return float(value)


# --- run later and concurrency keys ---------------------------------------------------------

# A run_at this far in the past is taken as "now" (clocks differ a little between a client and
# Board); further back it is a mistake worth naming.
RUN_AT_PAST_TOLERANCE_SECONDS = 60
# The furthest ahead work may be scheduled: a year (a later date is almost certainly a typo).
RUN_AT_MAX_AHEAD_SECONDS = 366 * 86400
CONCURRENCY_KEY_MAX_CHARS = 200
CONCURRENCY_LIMIT_RANGE = (1, 10000)
RATE_KEY_MAX_CHARS = 200
RATE_ALLOWANCE_RANGE = (1, 10000)
RATE_INTERVALS = ("second", "minute", "hour")


def run_at(value: Any, field: str = "run_at", *, now: Any = None) -> Any:
    """An RFC 3339 timestamp with an offset (``2026-12-02T10:00:00Z``), or a timezone-aware
    datetime, within [now − 60 s, now + 1 year]. Returns an aware datetime."""
    from datetime import UTC, datetime, timedelta

    if isinstance(value, datetime):
        when = value
    else:
        text = require_line(field, value)
        if not RFC3339_RE.fullmatch(text):
            raise Invalid(field, "must be an RFC 3339 timestamp with a time zone offset, e.g. 2026-12-02T10:00:00Z")
        try:
            when = datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
        except ValueError:
            raise Invalid(field, f"is not a valid date and time: {text!r}") from None
    if when.tzinfo is None:
        raise Invalid(field, "must carry a time zone offset (Z or ±hh:mm)")
    current = now or datetime.now(UTC)
    if when < current - timedelta(seconds=RUN_AT_PAST_TOLERANCE_SECONDS):
        raise Invalid(field, f"is in the past ({when.isoformat()}); leave it out to run now")
    if when > current + timedelta(seconds=RUN_AT_MAX_AHEAD_SECONDS):
        raise Invalid(field, "must be at most one year ahead")
    return when


RFC3339_RE = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def not_before(run_at_value: Any, delay_seconds: Any) -> Any:
    """``run_at`` or ``delay_seconds`` (not both) as the aware datetime the todo waits for, or
    None (claimable now)."""
    from datetime import UTC, datetime, timedelta

    if run_at_value is not None and delay_seconds is not None:
        raise Invalid("run_at", "give run_at or delay_seconds, not both")
    if delay_seconds is not None:
        delay = require_int("delay_seconds", delay_seconds, 0, RUN_AT_MAX_AHEAD_SECONDS)
        return datetime.now(UTC) + timedelta(seconds=delay) if delay else None
    if run_at_value is None:
        return None
    return run_at(run_at_value)


def concurrency_key(value: Any, field: str = "concurrency_key") -> str | None:
    return label(field, value, CONCURRENCY_KEY_MAX_CHARS)


def concurrency_limit(value: Any, field: str = "limit") -> int:
    return require_int(field, value, *CONCURRENCY_LIMIT_RANGE)


def rate_key(value: Any, field: str = "rate_key") -> str | None:
    return label(field, value, RATE_KEY_MAX_CHARS)


def rate_allowance(value: Any, field: str = "limit") -> int:
    """How many claims a rate key allows per interval: 1 to 10,000 (the ring's length)."""
    return require_int(field, value, *RATE_ALLOWANCE_RANGE)


def rate_interval(value: Any, field: str = "interval") -> str:
    if value not in RATE_INTERVALS:
        raise Invalid(field, f"must be one of {', '.join(RATE_INTERVALS)}")
    return value


# --- required capabilities ------------------------------------------------------------------

CAPABILITIES_MAX = 16
CAPABILITY_MAX_CHARS = 64
# A label is a word a worker and a producer agree on (``gpu``, ``region:eu``, ``python=3.12``):
# no spaces or commas, so the Board's one-line field can list several without quoting.
CAPABILITY_PATTERN: LiteralString = r"^[A-Za-z0-9][A-Za-z0-9._:/=+-]*$"
_CAPABILITY_RE = re.compile(CAPABILITY_PATTERN)


def capability_labels(field: str, value: Any) -> list[str]:
    """A set of capability labels (a todo's ``requires``, a claim's or an endpoint's
    ``capabilities``): a list of at most 16 strings of 1 to 64 characters. None is the empty set;
    the answer is sorted and without repeats (a set, stored as ``text[]``)."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise Invalid(field, "must be a list of labels")
    if len(value) > CAPABILITIES_MAX:
        raise Invalid(field, f"must list at most {CAPABILITIES_MAX} labels, got {len(value)}")
    labels = set()
    for n, item in enumerate(value):
        where = f"{field}[{n}]"
        if not isinstance(item, str):
            raise Invalid(where, "must be a string")
        if item == "":
            raise Invalid(where, "must not be empty")
        if len(item) > CAPABILITY_MAX_CHARS:
            raise Invalid(where, f"must be at most {CAPABILITY_MAX_CHARS} characters, got {len(item)}")
        if not _CAPABILITY_RE.fullmatch(item):
            raise Invalid(where, "must be letters, digits and . _ : / = + - (starting with a letter or digit)")
        labels.add(item)
    return sorted(labels)


def capability_text(field: str, text: Any) -> list[str]:
    """The Board's one-line field: labels separated by commas or spaces. A problem with one label
    is the field's, saying which label (counted from 1): the form has one field, not a list."""
    raw = require_str(field, text or "")
    try:
        return capability_labels(field, [part for part in re.split(r"[\s,]+", raw) if part])
    except Invalid as exc:
        if exc.field == field:
            raise
        label = int(exc.field.removeprefix(f"{field}[").rstrip("]")) + 1
        raise Invalid(field, f"label {label}: {exc.problem}") from None


# Dependencies (docs/lifecycle.md, "Dependencies").
AFTER_MAX = 100
PARENT_FAILURE_RULES = ("cancel", "run")


def after(value: Any, field: str = "after") -> list[str]:
    """The parents a new todo waits for: at most 100 todo ids, repeats dropped (first kept)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise Invalid(field, "must be a list of todo ids")
    ids = [todo_id(v, f"{field}[{n}]") for n, v in enumerate(value)]
    unique = list(dict.fromkeys(ids))
    if len(unique) > AFTER_MAX:
        raise Invalid(field, f"must name at most {AFTER_MAX} todos")
    return unique


def after_items(value: Any, own_index: int, field: str = "after_items") -> list[int]:
    """Earlier items of the same batch a new todo waits for: indexes below its own, repeats dropped."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise Invalid(field, "must be a list of item indexes")
    out: list[int] = []
    for n, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise Invalid(f"{field}[{n}]", "must be an integer item index")
        if not 0 <= v < own_index:
            raise Invalid(f"{field}[{n}]", f"must name an earlier item of the batch (0 to {own_index - 1}), not {v}")
        if v not in out:
            out.append(v)
    if len(out) > AFTER_MAX:
        raise Invalid(field, f"must name at most {AFTER_MAX} items")
    return out


def on_parent_failure(value: Any) -> str:
    """What a child does when a parent dies or is canceled: ``cancel`` (the default) or ``run``."""
    if value is None:
        return "cancel"
    if value not in PARENT_FAILURE_RULES:
        raise Invalid("on_parent_failure", "must be 'cancel' or 'run'")
    return value


# --- trace context (docs/telemetry.md) --------------------------------------------------------

# W3C Trace Context's traceparent: version (not ff), trace id, parent span id (neither all
# zeros), flags; lower-case hex.
TRACEPARENT_PATTERN: LiteralString = "^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$"
_TRACEPARENT_RE = re.compile(TRACEPARENT_PATTERN)
TRACEPARENT_FORMAT = (
    "must be a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, lower case, ids not all zeros"
)


def traceparent(value: Any, field: str = "traceparent") -> str | None:
    """A W3C ``traceparent`` as stored with a todo or an attempt (docs/telemetry.md)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _TRACEPARENT_RE.fullmatch(value):
        raise Invalid(field, TRACEPARENT_FORMAT)
    return value

"""Form input for the Board's actions: text from a browser form into the store's typed inputs
(each action's parser in ``todos/dashboard/views/action_table.py`` is made of these).

The store validates again (it trusts no caller); this layer only turns strings into the types
the store expects and names the field when that fails ("result: not valid JSON …"), before
anything is written.
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import UTC
from typing import Any

from todos.core.errors import Invalid
from todos.core.store import inputs
from todos.dashboard import clock


def note(data) -> str | None:
    value = data.get("note", "")
    return inputs.note(value)


class _NotJSON(ValueError):
    pass


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past Python's int conversion limit
        raise _NotJSON(f"a number has more than {sys.get_int_max_str_digits()} digits") from None


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJSON(f"the number {text[:20]} is out of range")
    return value


def _constant(name: str):
    raise _NotJSON(f"{name} is not JSON")


def json_field(data, field: str) -> Any:
    """Optional JSON text. Empty means absent; anything else must parse, with numbers a
    database can hold and at most ``inputs.JSON_MAX_DEPTH`` levels of nesting (the store
    checks the rest: size, NUL characters)."""
    raw = (data.get(field) or "").strip()
    if not raw:
        return None
    try:
        value = json.loads(raw, parse_int=_integer, parse_float=_finite, parse_constant=_constant)
    except _NotJSON as exc:
        raise Invalid(field, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise Invalid(field, f"must not be nested more than {inputs.JSON_MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        problem = getattr(exc, "msg", str(exc))
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise Invalid(field, f"not valid JSON ({problem}{where})") from None
    inputs.require_depth(field, value)
    return value


ECHO_DIGITS = 12


def integer(data, field: str, lo: int, hi: int, *, required: bool = True) -> int | None:
    raw = (data.get(field) or "").strip()
    if not raw:
        if required:
            raise Invalid(field, "is required")
        return None
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(field, f"must be a whole number from {lo} to {hi}") from None
    if not lo <= value <= hi:
        # what was typed is echoed only while it is short (a 5,000-digit number is not)
        got = f", got {value}" if len(raw) <= ECHO_DIGITS else ""
        raise Invalid(field, f"must be from {lo} to {hi}{got}")
    return value


def lease_seconds(data) -> int | None:
    minutes = integer(data, "lease_minutes", 1, 1440, required=False)
    return None if minutes is None else max(minutes * 60, 60)


def assignee(data) -> str | None:
    value = (data.get("assignee") or "").strip()
    return value or None


def create_kwargs(data, allowed: dict[str, tuple]) -> dict:
    """A hand-made todo. ``target`` is ``<endpoint id>|<queue>`` from the form's list of the
    viewer's (endpoint, queue) pairs; anything not in ``allowed`` is refused by name."""
    target = data.get("target") or ""
    if target not in allowed:
        raise Invalid("target", "pick one of your team's endpoints and one of its queues")
    endpoint_id, queue = allowed[target]
    return {
        "endpoint_id": endpoint_id,
        "queue": queue,
        "title": (data.get("title") or "").strip(),
        "kind": (data.get("kind") or "").strip() or None,
        "source": (data.get("source") or "").strip() or None,
        "payload": json_field(data, "payload"),
        "idempotency_key": (data.get("idempotency_key") or "").strip() or None,
        "priority": integer(data, "priority", *inputs.PRIORITY_RANGE, required=False),
        "max_attempts": integer(data, "max_attempts", *inputs.MAX_ATTEMPTS_RANGE, required=False),
        "requires": inputs.capability_text("requires", data.get("requires") or ""),
        "after": id_list(data, "after"),
        "on_parent_failure": (data.get("on_parent_failure") or "").strip() or None,
        "rate_key": (data.get("rate_key") or "").strip() or None,
        "timeout_seconds": whole_number(data, "timeout_seconds"),
        "note": note(data),
    }


def id_list(data, field: str) -> list[str] | None:
    """Todo ids typed into one field, separated by commas or spaces; empty means none. Each id is
    checked by the store, which names it as the API does (``after[1]``, counted from 0)."""
    raw = require_text(data, field)
    ids = [part for part in re.split(r"[\s,]+", raw) if part]
    return ids or None


def whole_number(data, field: str) -> int | str | None:
    """A number typed into a field, handed to the store as the API would send it: an integer, or
    the text itself when it is not one (the store refuses it with the API's words)."""
    raw = require_text(data, field).strip()
    if not raw:
        return None
    return int(raw) if re.fullmatch(r"-?[0-9]{1,12}", raw) else raw


def require_text(data, field: str) -> str:
    return inputs.require_str(field, data.get(field) or "")


_LOCAL_MINUTES = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?$")


def run_at(data, field: str = "run_at") -> str | None:
    """A time to run at: empty means now. The Board's ``datetime-local`` field sends no offset
    (``2026-12-02T10:30``); its label names the viewer's zone, so it is read in that zone
    (``clock.parse_local``: a time the clocks skip is refused). A full RFC 3339 time is taken
    as written. The store checks the range (not past, at most a year ahead)."""
    raw = (data.get(field) or "").strip()
    if not raw:
        return None
    if _LOCAL_MINUTES.match(raw):
        when = clock.parse_local(field, raw).astimezone(UTC)
        return when.isoformat(timespec="microseconds" if when.microsecond else "seconds").replace("+00:00", "Z")
    return raw


def edit_changes(data) -> dict:
    """The edit form: every field it shows, as the store's ``waiting.edit`` takes them (the store
    audits only the values that differ)."""
    changes: dict[str, Any] = {}
    if "title" in data:
        changes["title"] = (data.get("title") or "").strip()
    if "payload" in data:  # absent when the payload holds masked keys (the form cannot show it)
        changes["payload"] = json_field(data, "payload")
    if "priority" in data:
        changes["priority"] = integer(data, "priority", *inputs.PRIORITY_RANGE)
    if "max_attempts" in data:
        changes["max_attempts"] = integer(data, "max_attempts", *inputs.MAX_ATTEMPTS_RANGE)
    if "assignee" in data:
        changes["assignee"] = assignee(data)
    if "requires" in data:
        changes["requires"] = inputs.capability_text("requires", data.get("requires") or "")
    if "run_at" in data:
        changes["run_at"] = run_at(data)
    return changes

"""A small JSON Schema validator for verb inputs, whose every message names the field.

General validators report "'x' is not of type 'integer'" with a JSON pointer; agents need
``priority: must be an integer from -32768 to 32767``. This one understands the keywords the verb
table uses (``type``, ``properties``, ``required``, ``additionalProperties: false``, ``items``,
``enum``, ``minimum``/``maximum``, ``minLength``/``maxLength``, ``pattern``,
``minItems``/``maxItems``) and raises :class:`~todos.core.errors.Invalid` at the first problem.
Anything else in a schema (``description``, ``format``, …) is documentation.

The store re-validates semantics (a title of blanks, an artifact's scheme, NUL characters): the
schema is the shape, the store is the meaning.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from todos.core.errors import Invalid

ROOT = "body"

TYPE_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def validate(schema: dict, value: Any, field: str = ROOT) -> Any:
    """Return ``value`` checked against ``schema`` (integral floats such as ``5.0`` become ``5``
    where an integer is wanted); raise ``Invalid(field, problem)`` at the first mismatch."""
    types = schema.get("type")
    if types is not None:
        value = _check_type(types if isinstance(types, list) else [types], value, field)
    if "enum" in schema and value not in schema["enum"]:
        raise Invalid(field, f"must be one of {', '.join(_show(v) for v in schema['enum'])}")
    if value is None:
        return value
    if isinstance(value, str):
        _check_string(schema, value, field)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(schema, value, field)
    elif isinstance(value, list):
        value = _check_array(schema, value, field)
    elif isinstance(value, dict):
        value = _check_object(schema, value, field)
    return value


def _show(value: Any) -> str:
    return "null" if value is None else str(value)


def _check_type(types: list[str], value: Any, field: str) -> Any:
    for name in types:
        if name == "null" and value is None:
            return value
        if name == "boolean" and isinstance(value, bool):
            return value
        if name == "string" and isinstance(value, str):
            return value
        if name == "object" and isinstance(value, dict):
            return value
        if name == "array" and isinstance(value, list):
            return value
        if name == "integer" and not isinstance(value, bool):
            if isinstance(value, int):
                return value
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                return int(value)
        if name == "number" and not isinstance(value, bool) and isinstance(value, (int, float)):
            if isinstance(value, int) or math.isfinite(value):
                return value
    words = [TYPE_WORDS[name] for name in types]
    raise Invalid(field, "must be " + (" or ".join(words)))


def _check_string(schema: dict, value: str, field: str) -> None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if (low is not None and len(value) < low) or (high is not None and len(value) > high):
        if low and high is not None:
            raise Invalid(field, f"must be {low} to {high} characters, got {len(value)}")
        if high is not None:
            raise Invalid(field, f"must be at most {high} characters, got {len(value)}")
        raise Invalid(field, f"must be at least {low} characters")
    pattern = schema.get("pattern")
    if pattern is not None and not _compiled(pattern).search(value):
        raise Invalid(field, f"must match {pattern}")


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern:
    """``pattern`` read as JSON Schema reads it (ECMA-262): a final ``$`` is the end of the text.
    Python's ``$`` also matches before a trailing newline, which would let ``"default\\n"``
    through a queue-name pattern."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _check_number(schema: dict, value: int | float, field: str) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            raise Invalid(field, f"must be from {low} to {high}, got {value}")
        if high is not None:
            raise Invalid(field, f"must be at most {high}, got {value}")
        raise Invalid(field, f"must be at least {low}, got {value}")


def _check_array(schema: dict, value: list, field: str) -> list:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if (low is not None and len(value) < low) or (high is not None and len(value) > high):
        if low is not None and high is not None:
            raise Invalid(field, f"must list {low} to {high} items, got {len(value)}")
        if high is not None:
            raise Invalid(field, f"must list at most {high} items, got {len(value)}")
        raise Invalid(field, f"must list at least {low} items")
    items = schema.get("items")
    if items is None:
        return value
    return [validate(items, item, f"{field}[{n}]") for n, item in enumerate(value)]


def _child(field: str, key: str) -> str:
    return key if field == ROOT else f"{field}.{key}"


def _check_object(schema: dict, value: dict, field: str) -> dict:
    properties = schema.get("properties", {})
    if schema.get("additionalProperties") is False:
        unknown = sorted(key for key in value if key not in properties)
        if unknown:
            raise Invalid(_child(field, unknown[0][:64]), "is not a known field")
    for key in schema.get("required", ()):
        if key not in value:
            raise Invalid(_child(field, key), "is required")
    out = dict(value)
    for key, sub in properties.items():
        if key in value:
            out[key] = validate(sub, value[key], _child(field, key))
    return out

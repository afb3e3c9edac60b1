"""The one toolkit the store and the selectors compose SQL with.

Statements are ``LiteralString`` end to end: text written in this code base, joined with other
such text. A value that comes from outside (a request, a row, a setting) reaches a statement only
as a parameter, bound by name; the type checker (pyright, run by ``.ci/run``) rejects any ``str``
that is not literal where psycopg or :class:`todos.core.db.Statement` expects SQL. Nothing here edits
SQL text after it is written (no ``.replace``, no regular expressions): a fragment is a function
that returns its text and, through :class:`Params`, binds its own parameters.

The two ways a value becomes SQL text on purpose are both here and both go through psycopg's
``sql.Literal``: an integer (a ``LIMIT`` the planner must see, not a parameter it would plan
generically) and a todo state from the schema's fixed set (so a partial index matches). Each
checks its input before quoting it, so the ``cast`` below it is sound.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, LiteralString, cast

from psycopg import sql

from todos.core.words import TodoState

# The schema's todo states (``todos.state``'s CHECK constraint): the only text a state literal may
# be, and the states the store's inputs accept (``todos.core.store.inputs``).
TODO_STATES: tuple[LiteralString, ...] = tuple(state.value for state in TodoState)


class Params(dict[str, Any]):
    """The parameters of one statement, as fragments bind them.

    A fragment that needs a value calls :meth:`bind` and writes the placeholder it gets back. Two
    fragments may share a name only for the same value (the same viewer's endpoints, say): binding
    a name again with a different value is a bug in the composition and raises at once, instead
    of one fragment silently running with the other's value.
    """

    def bind(self, name: LiteralString, value: Any) -> LiteralString:
        if name in self and self[name] != value:
            raise ValueError(f"SQL parameter {name!r} bound twice with different values")
        self[name] = value
        return f"%({name})s"

    def merge(self, other: dict[str, Any] | Params | Any) -> None:
        """Take every parameter of ``other`` (a fragment built on its own), under the same rule."""
        for name, value in other.items():
            if name in self and self[name] != value:
                raise ValueError(f"SQL parameter {name!r} bound twice with different values")
            self[name] = value


def integer(value: int) -> LiteralString:
    """An integer as SQL text (``LIMIT 20``), for the few numbers the planner must see."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"an SQL integer literal must be an int, not {type(value).__name__}")
    return _integer_text(value)


@functools.lru_cache(maxsize=512)
def _integer_text(value: int) -> LiteralString:
    # Cached: the claim renders its LIMIT on every call, and psycopg's quoting is ~20 µs of it.
    return cast(LiteralString, sql.Literal(value).as_string())


def state(value: str) -> LiteralString:
    """A todo state as an SQL string literal (``'pending'``), so a partial index can match it."""
    if value not in TODO_STATES:
        raise ValueError(f"not a todo state: {value!r}")
    return cast(LiteralString, sql.Literal(value).as_string())


def states(values: Iterable[str]) -> LiteralString:
    """Todo states as an SQL text array (``ARRAY['pending','claimed']::text[]``)."""
    return f"ARRAY[{join(', ', (state(v) for v in values))}]::text[]"


def join(separator: LiteralString, parts: Iterable[LiteralString]) -> LiteralString:
    """``separator.join(parts)``, typed: every part and the separator are SQL text already."""
    return separator.join(parts)


def conjunction(predicates: Iterable[LiteralString], *, indent: LiteralString | None = None) -> LiteralString:
    """``p1 AND p2 AND …`` (``TRUE`` when there are none); with ``indent``, one predicate a line,
    each ``AND`` after the first at ``indent``, so a long filter stays readable."""
    separator: LiteralString = " AND " if indent is None else f"\n{indent}AND "
    return join(separator, predicates) or "TRUE"


def columns(names: Iterable[LiteralString], alias: LiteralString = "") -> LiteralString:
    """A column list, each name qualified with ``alias`` when one is given."""
    prefix: LiteralString = f"{alias}." if alias else ""
    return join(", ", (f"{prefix}{name}" for name in names))

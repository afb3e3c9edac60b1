"""A state tab's count and a tab's rows, shared by the tab counts (``todo_counts``) and the list
(``todo_list``), which counts its own search window's tabs in the statement that chose its page."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, LiteralString

from todos.core import compose
from todos.core.selectors.todo_query import STATE_PREDICATES

COUNT_CAP = 1_000  # a tab reads "1,000+" past it; ~1 ms of index per state at most
# Each tab's column in the one statement that counts them all (a literal per key, never a name built at runtime).
TAB_COLUMNS: dict[str, LiteralString] = {
    "all": '"all"',
    "pending": '"pending"',
    "blocked": '"blocked"',
    "scheduled": '"scheduled"',
    "claimed": '"claimed"',
    "retry": '"retry"',
    "dead": '"dead"',
    "done": '"done"',
    "canceled": '"canceled"',
}


@dataclass(frozen=True)
class Count:
    """A count that may have stopped at ``cap``: then it reads "1,000+"."""

    value: int
    capped: bool
    cap: int = COUNT_CAP
    at_least: bool = False  # a search's count within its window: more may match further back

    def __str__(self) -> str:
        if self.capped:
            return f"{self.cap:,}+"
        return f"{self.value:,}+" if self.at_least and self.value else f"{self.value:,}"


def tab_predicate(key: str) -> LiteralString:
    """A tab's rows as a predicate over ``t`` (retry and dead split the store's ``failed``)."""
    state, extra = STATE_PREDICATES[key]
    return compose.conjunction((f"t.state = {compose.state(state)}", *((extra,) if extra else ())))


def per_tab_counts(
    columns: Mapping[str, LiteralString] = TAB_COLUMNS, separator: LiteralString = ",\n       "
) -> LiteralString:
    """One ``count(*) FILTER`` per state tab over rows ``t``, each as its column in ``columns``."""
    return compose.join(
        separator,
        (f"count(*) FILTER (WHERE {tab_predicate(key)}) AS {columns[key]}" for key in STATE_PREDICATES),
    )


def window_counts(row: Mapping[str, Any] | None, *, full: bool, columns: Mapping[str, LiteralString] = TAB_COLUMNS):
    """The tabs' counts a search window's :func:`per_tab_counts` gave, "n+" when the window was
    full (more may match further back). No row: nothing matched."""
    counts = {key: Count(row[columns[key].strip('"')] if row else 0, False, at_least=full) for key in STATE_PREDICATES}
    return {"all": Count(sum(c.value for c in counts.values()), False, at_least=full), **counts}

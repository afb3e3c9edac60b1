"""A state tab's count and a tab's rows, shared by the tab counts (``todo_counts``) and the list
(``todo_list``), which counts its own search window's tabs in the statement that chose its page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString

from todos.core import compose
from todos.core.selectors.todo_query import STATE_PREDICATES

COUNT_CAP = 1_000  # a tab reads "1,000+" past it; ~1 ms of index per state at most


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

"""The todo list's "failed with" filter: failed todos whose last attempt's reason falls in one
reason group of the Dead letters page.

The statements that fail a todo store its group (``todos.failure_reason_group``, written with
``board_reason_group``, the function the Dead letters page groups by), so a group's "in the list"
link lists the same todos the group counts, and each endpoint's branch walks the partial index
``todos_failed_reason`` instead of computing every failed row's group.
"""

from __future__ import annotations

from typing import LiteralString


def failed_with_predicate(fingerprint: LiteralString) -> LiteralString:
    """A failed todo (retry scheduled or dead) whose reason's group is ``fingerprint`` (a bound
    placeholder)."""
    return f"t.state = 'failed' AND t.failure_reason_group = {fingerprint}"

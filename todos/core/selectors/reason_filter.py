"""The todo list's "failed with" filter: failed todos whose last attempt's reason falls in one
reason group of the Dead letters page.

The grouping is that page's own expression (``failure_reason.FINGERPRINT``, over ``d``, the
todo, and ``a``, its last attempt), so a group's "in the list" link lists the same todos the
group counts.
"""

from __future__ import annotations

from typing import LiteralString

from todos.core.selectors.failure_reason import FINGERPRINT


def failed_with_predicate(fingerprint: LiteralString) -> LiteralString:
    """A failed todo (retry scheduled or dead) whose reason's group is ``fingerprint`` (a bound
    placeholder)."""
    return f"""t.state = 'failed' AND (
        SELECT {FINGERPRINT}
        FROM (SELECT t.id, t.result, t.attempts_total) d
        LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
      ) = {fingerprint}"""

"""The long poll's look: ``claim_next``'s own statement, its miss read for the next refill time.

It runs the store's ``claim_next`` statement unchanged (the catalog names that statement once) and
only reads one more column of its answer: on a miss, when a throttled rate key of the endpoint's
pending work gets an allowance back, which bounds how long the long poll waits (``longpoll.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from todos.core.db import Statement
from todos.core.store.agent import claim_next
from todos.core.store.records import Claim
from todos.core.store.scopes import AgentScope


@dataclass(frozen=True)
class NextClaim:
    """The claim, or when none, in how many seconds a throttled rate key of the endpoint's pending
    work gets an allowance back (None: none is throttled)."""

    claim: Claim | None
    refill_in: float | None


def claim_next_or_refill(agent: AgentScope, **args: Any) -> Statement[NextClaim]:
    """``claim_next``'s statement, answering its miss with the next refill time."""
    stmt = claim_next(agent, **args)

    def finish(rows: list[dict]) -> NextClaim:
        claim = stmt.finish(rows)
        refill = rows[0].get("refill_in") if claim is None and rows else None
        return NextClaim(claim, None if refill is None else max(0.0, float(refill)))

    return Statement(stmt.sql, stmt.params, finish)

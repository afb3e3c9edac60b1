"""The parents of a new todo (docs/lifecycle.md, "Dependencies"): the CTEs a create adds when it
names ``after``, and the refusals they classify.

The parents are read and locked ``FOR SHARE`` by the create itself, so a parent finishing at the
same moment either committed first (the create sees it done, dead or canceled) or waits for the
create to commit (its settling functions then see the new dependency rows).
"""

from __future__ import annotations

from typing import LiteralString

from todos.core.errors import Invalid
from todos.core.words import TodoState

# A parent's standing as the create sees it: done (does not block), ended (dead or canceled: a
# ``cancel`` child is refused, a ``run`` child does not count it), or open (counts).
PARENT_STANDING: LiteralString = f"""CASE
            WHEN p.state = {TodoState.DONE.sql} THEN 'done'
            WHEN p.state = {TodoState.CANCELED.sql}
              OR (p.state = {TodoState.FAILED.sql} AND p.next_retry_at IS NULL) THEN 'ended'
            ELSE 'open' END"""

# The CTEs: ``parents`` (each named id with its standing; unknown and other teams' ids are absent)
# and ``refused`` (the first bad index of ``after`` and why). Parameters: ``after`` (text[]),
# ``on_parent_failure``, ``team_id``.
PARENTS: LiteralString = f"""parents AS MATERIALIZED (
    SELECT p.id, {PARENT_STANDING} AS standing
    FROM todos p JOIN endpoints pe ON pe.id = p.endpoint_id
    WHERE p.id = ANY(%(after)s::text[]) AND pe.team_id = %(team_id)s
    ORDER BY p.id
    FOR SHARE OF p
),
refused AS (
    SELECT a.n - 1 AS n, CASE WHEN p.id IS NULL THEN 'unknown' ELSE 'ended' END AS why
    FROM unnest(%(after)s::text[]) WITH ORDINALITY AS a(id, n)
    LEFT JOIN parents p ON p.id = a.id
    WHERE p.id IS NULL OR (p.standing = 'ended' AND %(on_parent_failure)s = 'cancel')
    ORDER BY a.n
    LIMIT 1
),
open_parents AS (SELECT count(*) FILTER (WHERE standing = 'open')::integer AS n FROM parents)"""

# The new todo's time and counts, given ``open_parents`` and its own ``%(not_before)s``.
BLOCKED_TIME: LiteralString = """CASE WHEN (SELECT n FROM open_parents) > 0 THEN 'infinity'::timestamptz
                 WHEN %(not_before)s::timestamptz > now() THEN %(not_before)s::timestamptz END"""
OWN_TIME: LiteralString = """CASE WHEN (SELECT n FROM open_parents) > 0 AND %(not_before)s::timestamptz > now()
                 THEN %(not_before)s::timestamptz END"""

# The dependency rows of the created todo (none when the create was deduplicated): a parent that
# no longer counts is written settled.
EDGES: LiteralString = """edges AS (
    INSERT INTO todo_dependencies (child_id, parent_id, settled)
    SELECT i.id, p.id, p.standing <> 'open'
    FROM ins i CROSS JOIN parents p
)"""


def refusal(after: list[str], n: int, why: str, field: str = "after") -> Invalid:
    """The error for ``after[n]``: unknown (or another team's: the same words), or ended."""
    if why == "unknown":
        return Invalid(f"{field}[{n}]", f"no such todo in this team: {after[n]}")
    return Invalid(
        f"{field}[{n}]",
        f"the todo is already dead or canceled, so it will never be done: {after[n]} "
        "(on_parent_failure 'run' accepts it and does not wait for it)",
    )

"""The parents of a new todo (docs/lifecycle.md, "Dependencies"): the CTEs a create adds when it
names ``after``, and the refusals they classify.

The parents are read and locked ``FOR NO KEY UPDATE`` by the create itself, and the open ones are
marked ``has_children`` (0038) in the same statement, so a parent finishing at the same moment
either committed first (the create sees it done, dead or canceled) or waits for the create to
commit (it then updates the marked row, and its settling functions see the new dependency rows).
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
    FOR NO KEY UPDATE OF p
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

# The parents of the dependency rows this statement wrote and left open are marked
# ``has_children``, so the statement that completes one settles its children
# (``fragments.children_done``). ``parents`` holds the named parents' row locks, so nothing
# changes them in between; a live todo a batch item was answered with (by its key) is locked by
# this UPDATE. A parent the statement created itself (a batch item) is not visible here, and was
# inserted marked (``BATCH_VALUES``).
MARK_PARENTS: LiteralString = """marked AS (
    UPDATE todos p SET has_children = true
    FROM edges e
    WHERE p.id = e.parent_id AND NOT e.settled AND NOT p.has_children
)"""

# The dependency rows of the created todo (none when the create was deduplicated): a parent that
# no longer counts is written settled.
EDGES: LiteralString = f"""edges AS (
    INSERT INTO todo_dependencies (child_id, parent_id, settled)
    SELECT i.id, p.id, p.standing <> 'open'
    FROM ins i CROSS JOIN parents p
    RETURNING parent_id, settled
),
{MARK_PARENTS}"""


def refusal(after: list[str], n: int, why: str, field: str = "after") -> Invalid:
    """The error for ``after[n]``: unknown (or another team's: the same words), or ended."""
    if why == "unknown":
        return Invalid(f"{field}[{n}]", f"no such todo in this team: {after[n]}")
    return Invalid(
        f"{field}[{n}]",
        f"the todo is already dead or canceled, so it will never be done: {after[n]} "
        "(on_parent_failure 'run' accepts it and does not wait for it)",
    )


# --- create_batch: the same rules per item, and parents among the batch's earlier items ---------

# The item's dependency columns, beside its fields (one JSON array per item: the arrays of the
# batch are not rectangular).
BATCH_ITEM_ARRAYS: LiteralString = """,
                %(afters)s::jsonb[], %(after_items)s::jsonb[], %(rules)s::text[]"""
BATCH_ITEM_NAMES: LiteralString = ",\n                              after, after_items, rule"

# ``parents``: every id the items name, locked and with its standing (as ``PARENTS``). ``refd``:
# the standing of each item as a parent of a later one: a new todo is open; one whose key a live
# todo already holds is that todo, ended if it is canceled. ``refused``: the first bad reference.
# ``need``: how many open parents each item waits for. ``named``: the items a later one names, and
# their keys (an item whose key an earlier item took is answered with that item's todo).
BATCH_PARENTS: LiteralString = f"""
parents AS MATERIALIZED (
    SELECT p.id, {PARENT_STANDING} AS standing
    FROM todos p JOIN endpoints pe ON pe.id = p.endpoint_id
    WHERE p.id = ANY(%(after)s::text[]) AND pe.team_id = %(team_id)s
    ORDER BY p.id
    FOR NO KEY UPDATE OF p
),
refd AS (
    SELECT i.n, CASE WHEN lv.state = {TodoState.CANCELED.sql} THEN 'ended' ELSE 'open' END AS standing
    FROM item i
    LEFT JOIN LATERAL (
        SELECT t.state FROM todos t
        WHERE i.key IS NOT NULL AND t.endpoint_id = %(endpoint_id)s AND t.idempotency_key = i.key
          AND t.state <> {TodoState.DONE.sql} AND (t.state <> {TodoState.FAILED.sql} OR t.next_retry_at IS NOT NULL)
    ) lv ON true
),
refused AS (
    SELECT * FROM (
        SELECT i.n - 1 AS item, 'after' AS field, a.k - 1 AS idx,
               CASE WHEN p.id IS NULL THEN 'unknown' ELSE 'ended' END AS why
        FROM item i CROSS JOIN LATERAL jsonb_array_elements_text(i.after) WITH ORDINALITY AS a(id, k)
        LEFT JOIN parents p ON p.id = a.id
        WHERE p.id IS NULL OR (p.standing = 'ended' AND i.rule = 'cancel')
        UNION ALL
        SELECT i.n - 1, 'after_items', r.k - 1, 'ended'
        FROM item i CROSS JOIN LATERAL jsonb_array_elements(i.after_items) WITH ORDINALITY AS r(ref, k)
        JOIN refd ON refd.n = (r.ref)::integer + 1
        WHERE refd.standing = 'ended' AND i.rule = 'cancel'
    ) x
    ORDER BY item, field, idx
    LIMIT 1
),
named AS (
    SELECT DISTINCT k.n, k.key
    FROM item i CROSS JOIN LATERAL jsonb_array_elements(i.after_items) r(ref)
    JOIN item k ON k.n = (r.ref)::integer + 1
),
need AS (
    SELECT i.n,
           (SELECT count(*) FROM jsonb_array_elements_text(i.after) a(id) JOIN parents p ON p.id = a.id
            WHERE p.standing = 'open')::integer
         + (SELECT count(*) FROM jsonb_array_elements(i.after_items) r(ref) JOIN refd ON refd.n = (r.ref)::integer + 1
            WHERE refd.standing = 'open')::integer AS open
    FROM item i
),"""
BATCH_COLUMNS: LiteralString = (
    ",\n                       parents_left, on_parent_failure, run_at_after_block, has_children"
)
BATCH_TIME: LiteralString = """-- blocked (scheduled for never) while a parent is open; its own time waits aside
           CASE WHEN w.open > 0 THEN 'infinity'::timestamptz WHEN i.not_before > now() THEN i.not_before END"""
# An item a later one names is inserted marked ``has_children`` (``MARK_PARENTS`` cannot see it).
BATCH_VALUES: LiteralString = """,
           w.open, i.rule, CASE WHEN w.open > 0 AND i.not_before > now() THEN i.not_before END,
           (i.n IN (SELECT n FROM named) OR i.key IN (SELECT key FROM named WHERE key IS NOT NULL)) IS TRUE"""
BATCH_GUARD: LiteralString = """ JOIN need w ON w.n = i.n
    WHERE NOT EXISTS (SELECT 1 FROM refused)"""
# The dependency rows of the items this statement created: the named parents, and the todo each
# referenced item was answered with (its own, or the live one holding its key).
BATCH_EDGES: LiteralString = f""",
edges AS (
    INSERT INTO todo_dependencies (child_id, parent_id, settled)
    SELECT c.id, p.id, p.standing <> 'open'
    FROM ins c JOIN item i ON i.id = c.id
    CROSS JOIN LATERAL jsonb_array_elements_text(i.after) a(id)
    JOIN parents p ON p.id = a.id
    UNION ALL
    SELECT c.id, pa.todo_id, refd.standing <> 'open'
    FROM ins c JOIN item i ON i.id = c.id
    CROSS JOIN LATERAL jsonb_array_elements(i.after_items) r(ref)
    JOIN answer pa ON pa.n = (r.ref)::integer + 1
    JOIN refd ON refd.n = pa.n
    WHERE pa.todo_id IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING parent_id, settled
),
{MARK_PARENTS}"""
BATCH_REFUSED: LiteralString = """,
       f.item AS refused_item, f.field AS refused_field, f.idx AS refused_n, f.why AS refused_why"""

"""Prototypes of store changes, measured beside the unchanged store without editing it.

``bench/`` may not change ``todos/store``. To measure a proposed change, a variant rewrites the
SQL text of a :class:`~todos.db.Statement` the store built (same parameters, same ``finish``)
and/or runs session settings on the worker's connection; ``python -m bench.drain --systems
store,store-variant --variant NAME`` runs it beside the store. Each variant's docstring says
what it stands for; the measured effect is in ``bench/README.md`` ("Findings").
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Callable

from todos.db import Statement


@dataclass(frozen=True)
class Variant:
    doc: str
    rewrite: Callable[[str], str] = lambda sql: sql
    session: tuple[str, ...] = ()  # run once on each worker connection
    schema: tuple[str, ...] = ()  # run once on the fresh store database, after migrate
    notifier: bool = False  # run the outbox notifier loop beside the workers
    literal_limit: bool = False  # write the claim's LIMIT into the SQL text (see literal_limit)


def _strip_calls(sql: str, opener: str) -> str:
    """Replace every balanced ``(SELECT count(pg_notify(…)) …)`` scalar subquery by ``0``."""
    out, i = [], 0
    while (j := sql.find(opener, i)) >= 0:
        depth, k = 0, j
        while True:
            if sql[k] == "(":
                depth += 1
            elif sql[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        out.append(sql[i:j])
        out.append("0")
        i = k + 1
    out.append(sql[i:])
    return "".join(out)


def strip_notify(sql: str) -> str:
    return _strip_calls(sql, "(SELECT count(pg_notify(")


def _replace_once(sql: str, old: str, new: str) -> str:
    if sql.count(old) < 1:
        raise ValueError(f"variant does not fit this statement any more: {old[:60]!r} not found")
    return sql.replace(old, new, 1)


# The claim's fresh-work scan checks the queue pause once per queue, not per row: with the
# NOT EXISTS inside the LATERAL, PostgreSQL plans an anti join whose row estimate collapses to 1,
# so it abandons the (endpoint_id, queue, priority, created_at) partial index and sorts every
# pending row of the endpoint (a Seq Scan + Sort per claim: O(N) per claim, O(N²) per drain).
PAUSED_QUEUE = """NOT EXISTS (
        SELECT 1 FROM queue_pauses qp JOIN endpoints pe ON pe.team_id = qp.team_id
        WHERE pe.id = %(endpoint_id)s AND qp.queue = uq.name)"""


def pause_per_queue(sql: str) -> str:
    from todos.store.fragments import NOT_PAUSED

    cut = sql.find("\nrecoverable AS (")
    if cut < 0 or "\nfresh AS (" not in sql[:cut]:
        raise ValueError("variant does not fit this statement any more: no fresh/recoverable CTEs")
    fresh, rest = sql[:cut], sql[cut:]
    fresh, dropped = re.subn(r"\n\s*AND " + re.escape(NOT_PAUSED), "", fresh)
    fresh, filtered = re.subn(
        r"unnest\(%\(queues\)s::text\[\]\) AS (\w+)\(name\)",
        lambda m: (f"(SELECT uq.name FROM unnest(%(queues)s::text[]) AS uq(name)\n"
                   f"          WHERE {PAUSED_QUEUE}) AS {m.group(1)}(name)"),
        fresh, count=1,
    )
    if not dropped:
        return sql  # the store already checks the pause once per queue: nothing to change
    if not filtered:
        raise ValueError("variant does not fit this statement any more: queue list not found")
    return fresh + rest


def prior_only_on_retry(sql: str) -> str:
    """A first claim (``attempts_total = 1``) has no prior attempt: skip the prior-attempts query
    (a UNION over ``closed`` and ``todo_attempts``, a sort and a json_agg) for it."""
    opener = "(SELECT coalesce(json_agg(p ORDER BY p.seq DESC), '[]'::json) FROM ("
    j = sql.find(opener)
    if j < 0:
        return sql
    depth, k = 0, j
    while True:
        if sql[k] == "(":
            depth += 1
        elif sql[k] == ")":
            depth -= 1
            if depth == 0:
                break
        k += 1
    return sql[:j] + f"CASE WHEN u.attempts_total > 1 THEN {sql[j:k + 1]} ELSE '[]'::json END" + sql[k + 1:]


# --- the outbox: notifications leave the hot transaction -------------------------------------

# An UNLOGGED table: its rows become visible at COMMIT like any other (so only committed changes
# are announced) but write no WAL; a crash empties it, which loses only live notifications
# nobody could have delivered anyway.
OUTBOX_SCHEMA = (
    "CREATE UNLOGGED TABLE IF NOT EXISTS board_outbox (op text NOT NULL, todo_id text NOT NULL, queue text NOT NULL, "
    "endpoint_id uuid NOT NULL)",
)
# One notifying transaction per tick for everyone, instead of one per claim and per complete:
# the same payload shape as notify_board (team, ids, queues, endpoints), chunked by 50 ids.
OUTBOX_FLUSH = """
WITH taken AS (DELETE FROM board_outbox RETURNING *)
SELECT count(pg_notify('board_events', json_build_object(
           'op', g.op, 'team', g.team_id, 'ids', g.ids, 'queues', g.queues, 'endpoints', g.endpoints)::text)) AS n
FROM (SELECT r.op, e.team_id, array_agg(r.todo_id) AS ids, array_agg(DISTINCT r.queue) AS queues,
             array_agg(DISTINCT r.endpoint_id) AS endpoints
      FROM (SELECT *, (row_number() OVER ()) / 50 AS chunk FROM taken) r
      JOIN endpoints e ON e.id = r.endpoint_id
      GROUP BY r.op, e.team_id, r.chunk) g"""

_NOTIFY_BOARD = re.compile(r"'op', '(\w+)'.*?FROM (\w+)\) r\s+JOIN endpoints e", re.S)


def to_outbox(sql: str) -> str:
    """Replace each board NOTIFY subquery by an INSERT into the outbox (a data-modifying CTE
    placed before the CTE that held the NOTIFY)."""
    opener = "(SELECT count(pg_notify('board_events'"
    j = sql.find(opener)
    if j < 0:
        return sql
    m = _NOTIFY_BOARD.search(sql, j)
    op, rows = m.group(1), m.group(2)
    anchor = max(sql.rfind("\nresult AS (", 0, j), sql.rfind("\nnotified AS (", 0, j))
    if anchor < 0:
        raise ValueError("variant does not fit this statement any more: no result/notified CTE")
    cte = (f"\noutbox AS (INSERT INTO board_outbox (op, todo_id, queue, endpoint_id) "
           f"SELECT '{op}', id, queue, endpoint_id FROM {rows}),")
    sql = sql[:anchor] + cte + sql[anchor:]
    return _strip_calls(sql, opener)


def _only_claims(rewrite: Callable[[str], str]) -> Callable[[str], str]:
    """Apply ``rewrite`` to the claim statements only (they are the ones with the fresh scan)."""
    return lambda sql: rewrite(sql) if "CROSS JOIN LATERAL" in sql and "fresh AS" in sql else sql


VARIANTS: dict[str, Variant] = {
    "no-notify": Variant(
        "claim/complete without their NOTIFY subqueries (what the transitions cost without "
        "PostgreSQL's commit-time NOTIFY lock)",
        rewrite=strip_notify,
    ),
    "pause-per-queue": Variant(
        "claim_next/claim_batch check the queue pause once per queue (outside the LATERAL), so "
        "the fresh scan is an ordered index scan on todos_pending with LIMIT",
        rewrite=_only_claims(pause_per_queue),
    ),
    "pause-per-queue+no-notify": Variant(
        "pause-per-queue, and claim/complete without NOTIFY",
        rewrite=lambda sql: strip_notify(_only_claims(pause_per_queue)(sql)),
    ),
    "pause-per-queue+async-commit": Variant(
        "pause-per-queue, and synchronous_commit = off on the worker's session",
        rewrite=_only_claims(pause_per_queue),
        session=("SET synchronous_commit = off",),
    ),
    "outbox": Variant(
        "claim/complete write their Board notification to an UNLOGGED outbox table in the same "
        "statement; one notifier loop turns the outbox into NOTIFYs every 100 ms",
        rewrite=to_outbox, schema=OUTBOX_SCHEMA, notifier=True,
    ),
    "pause-per-queue+outbox": Variant(
        "pause-per-queue and outbox",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), schema=OUTBOX_SCHEMA, notifier=True,
    ),
    "pause-per-queue+generic-plan": Variant(
        "pause-per-queue, and the session plans the prepared statements once (plan_cache_mode = "
        "force_generic_plan) instead of re-planning the claim for every call",
        rewrite=_only_claims(pause_per_queue),
        session=("SET plan_cache_mode = force_generic_plan",),
    ),
    "pause-per-queue+no-notify+generic-plan": Variant(
        "pause-per-queue, no NOTIFY, generic plans",
        rewrite=lambda sql: strip_notify(_only_claims(pause_per_queue)(sql)),
        session=("SET plan_cache_mode = force_generic_plan",),
    ),
    "pause-per-queue+literal-limit": Variant(
        "pause-per-queue, and the claim's LIMIT written as a literal",
        rewrite=_only_claims(pause_per_queue), literal_limit=True,
    ),
    "pause-per-queue+literal-limit+no-notify": Variant(
        "pause-per-queue, literal LIMIT, no NOTIFY",
        rewrite=lambda sql: strip_notify(_only_claims(pause_per_queue)(sql)), literal_limit=True,
    ),
    "fast": Variant(
        "the three proposed changes together: pause-per-queue, literal LIMIT, outbox",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), literal_limit=True,
        schema=OUTBOX_SCHEMA, notifier=True,
    ),
    "pause-per-queue+literal-limit+outbox": Variant(
        "pause-per-queue, literal LIMIT, outbox",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), literal_limit=True,
        schema=OUTBOX_SCHEMA, notifier=True,
    ),
    "fast+prior-on-retry": Variant(
        "fast, and the prior-attempts query only when the todo has had an earlier attempt",
        rewrite=lambda sql: prior_only_on_retry(to_outbox(_only_claims(pause_per_queue)(sql))), literal_limit=True,
        schema=OUTBOX_SCHEMA, notifier=True,
    ),
    "fast+no-claimer-fk": Variant(
        "fast, and todo_attempts without the claimer_endpoint_id foreign key (an agent's claimer "
        "is always the todo's own endpoint, whose deletion already cascades to the attempt): "
        "no FOR KEY SHARE lock on the one hot endpoints row per claim",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), literal_limit=True,
        schema=OUTBOX_SCHEMA + ("ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_claimer_endpoint_id_fkey",),
        notifier=True,
    ),
    "fast+no-exclusion": Variant(
        "measurement only: fast, without the deferred one-open-attempt exclusion constraint "
        "(what its commit-time check costs)",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), literal_limit=True,
        schema=OUTBOX_SCHEMA + ("ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_one_open",),
        notifier=True,
    ),
    "fast+lean-indexes": Variant(
        "pause-per-queue, literal LIMIT, outbox, and todos without the two list indexes that "
        "every claim and complete must also update (todos_endpoint_created, "
        "todos_endpoint_state_created; todos_endpoint_queue_state_created stays)",
        rewrite=lambda sql: to_outbox(_only_claims(pause_per_queue)(sql)), literal_limit=True,
        schema=OUTBOX_SCHEMA + ("DROP INDEX todos_endpoint_created", "DROP INDEX todos_endpoint_state_created"),
        notifier=True,
    ),
    "fillfactor-70": Variant(
        "todos and todo_attempts at fillfactor 70 instead of 80 (more room on each page for a "
        "heartbeat's new row version)",
        schema=("ALTER TABLE todos SET (fillfactor = 70)", "ALTER TABLE todo_attempts SET (fillfactor = 70)"),
    ),
    "async-commit": Variant(
        "the store's SQL unchanged; the worker's session sets synchronous_commit = off, so a "
        "notifying commit holds the NOTIFY lock without waiting for its WAL flush",
        session=("SET synchronous_commit = off",),
    ),
}


def get(name: str | None) -> Variant | None:
    if not name:
        return None
    try:
        return VARIANTS[name]
    except KeyError:
        raise SystemExit(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}") from None


def apply(name: str | None, stmt: Statement) -> Statement:
    v = get(name)
    if v is None:
        return stmt
    sql = stmt.sql
    if v.literal_limit and "limit" in stmt.params:
        sql = literal_limit(sql, stmt.params["limit"])
    return dataclasses.replace(stmt, sql=_rewritten(name, sql))


def literal_limit(sql: str, limit: int) -> str:
    """The claim's ``LIMIT %(limit)s`` as a literal (1..100, so at most 100 statement texts).

    With the limit a parameter, the plan PostgreSQL caches for the prepared claim (the generic
    plan) assumes ``cand`` has ~30 rows and joins it to ``todos`` with a Hash Join over a Seq Scan
    of the whole table: O(N) per claim. So PostgreSQL re-plans the claim for every call instead
    (custom plans, ~1.5 ms of planning each). With a literal ``LIMIT 1`` the generic plan is a
    primary-key nested loop, PostgreSQL keeps it, and planning leaves the hot path."""
    return sql.replace("%(limit)s", str(int(limit)))


@functools.lru_cache(maxsize=64)
def _rewritten(name: str, sql: str) -> str:
    # The store builds the same text for every call of a transition: rewrite it once.
    return VARIANTS[name].rewrite(sql)


def prepare_session(name: str | None, conn) -> None:
    v = get(name)
    if v is not None:
        for statement in v.session:
            conn.execute(statement)

"""Agent transitions: what an endpoint's credential can do to its own todos.

Every function here builds one :class:`~todos.core.db.Statement`; run it with ``todos.core.db.execute`` (sync)
or ``todos.core.db.aexecute`` (async). Each writes its change-log rows (``fragments.log_todos``) and no
Board NOTIFY: these are the agents' hot path, and a NOTIFY would queue every commit on one lock.
Scope is ``endpoint_id = <caller>``: another endpoint's todo is *not found*, byte for byte the
same as an absent one. Reports (heartbeat, complete, fail, release) carry the lease-token fence.
"""

from __future__ import annotations

import functools
from typing import Any, LiteralString

from django.conf import settings

from todos.core import compose
from todos.core.db import Statement
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound, StaleSnapshot
from todos.core.store import dependencies, inputs
from todos.core.store.claims import claim_sql, claims_from_rows
from todos.core.store.endpoint_gate import CLAIMS_OPEN, seen_sql
from todos.core.store.fragments import (
    BACKOFF,
    CLAIMABLE,
    FENCE,
    KEY_HAS_ROOM,
    NOT_PAUSED,
    RATE_HAS_ROOM,
    ROW_STATE,
    WITHIN_RUN_TIME_LIMIT,
    LoggedState,
    agent_miss,
    children_done,
    children_failed,
    children_woken,
    log_todos,
    notify_ready,
    queue_not_paused,
    search_document,
    stored_reason_group,
)
from todos.core.store.records import (
    TODO_COLUMNS,
    Claim,
    Created,
    ItemResult,
    StoreErrorInfo,
    Todo,
)
from todos.core.store.scopes import AgentScope
from todos.core.words import BoardState, ChangeOp, TodoState

MISSES = {"not_found": NotFound, "forbidden": Forbidden, "conflict": Conflict}
MISS_MESSAGES = {
    "not_found": "no such todo",
    "forbidden": "the todo's queue is outside this endpoint's scope",
    "conflict": (
        "the todo is not in a state this endpoint can {verb} "
        "(wrong state, not the lease holder, or the lease token does not match)"
    ),
}

DEDUPE_PREDICATE: LiteralString = (
    f"idempotency_key IS NOT NULL AND state <> {TodoState.DONE.sql}"
    f" AND (state <> {TodoState.FAILED.sql} OR next_retry_at IS NOT NULL)"
)


def _raise_miss(miss: LiteralString, verb: str, todo_id: str):
    raise MISSES[miss](f"{MISS_MESSAGES[miss].format(verb=verb)}: {todo_id}")


def _queues_for(agent: AgentScope, queue: Any) -> list[str]:
    if queue is None:
        return list(agent.queues)
    name = inputs.queue(queue)
    if name not in agent.queues:
        raise Forbidden(f"queue {name!r} is outside this endpoint's scope")
    return [name]


# --- create -----------------------------------------------------------------------------------


def create(
    agent: AgentScope,
    *,
    queue: Any,
    title: Any,
    kind: Any = None,
    source: Any = None,
    payload: Any = None,
    idempotency_key: Any = None,
    assignee: Any = None,
    priority: Any = None,
    max_attempts: Any = None,
    run_at: Any = None,
    delay_seconds: Any = None,
    concurrency_key: Any = None,
    requires: Any = None,
    after: Any = None,
    on_parent_failure: Any = None,
    timeout_seconds: Any = None,
    rate_key: Any = None,
    traceparent: Any = None,
) -> Statement[Created]:
    """Enqueue for ``agent`` (the owner; a hand-off resolves the target scope before calling).

    ``run_at`` (RFC 3339) or ``delay_seconds`` schedules it: it stays ``pending`` with
    ``next_retry_at`` set (the Board's *scheduled*) and no claim takes it before then; a time
    already reached (within the tolerance) is "now". ``concurrency_key`` caps how many todos of the
    team with that key are claimed at once (``concurrency_keys``, default 1); ``rate_key`` counts its
    claims against the team's rate limit of that key (``rate_limits``; none: unlimited). ``requires`` (at most 16
    capability labels) limits which claims take it: only one presenting all of them. ``after``
    (at most 100 ids of the team's todos) blocks it until they are done; ``on_parent_failure``
    (``cancel`` or ``run``) says what it does if one dies or is canceled first (``dependencies.py``).
    ``timeout_seconds`` (1 s..7 days) is its run-time limit: an attempt that runs longer is ended
    ``timed_out`` by the background sweep (``background.time_out``); none falls back to the team's
    default for the queue. ``traceparent`` (W3C) is the producer's trace context, kept with the
    todo and answered to the worker that claims it (docs/telemetry.md).

    Guard: none. Idempotent by key: ``INSERT … ON CONFLICT (the dedup predicate) DO NOTHING``; on
    conflict the live todo that covers the key is returned with ``created=False``. A done or
    dead-lettered todo no longer covers its key, so the same key then mints a new todo.
    Attempt rows: none. Log: none → ``pending``; agents waiting on the queue are woken.
    """
    params = {
        "endpoint_id": agent.endpoint_id,
        "team_id": agent.team_id,
        **_todo_fields(
            agent,
            queue=queue,
            title=title,
            kind=kind,
            source=source,
            payload=payload,
            idempotency_key=idempotency_key,
            assignee=assignee,
            priority=priority,
            max_attempts=max_attempts,
            run_at=run_at,
            delay_seconds=delay_seconds,
            concurrency_key=concurrency_key,
            requires=requires,
            timeout_seconds=timeout_seconds,
            rate_key=rate_key,
            traceparent=traceparent,
        ),
    }
    params["after"] = inputs.after(after)
    params["on_parent_failure"] = inputs.on_parent_failure(on_parent_failure) if params["after"] else None
    if on_parent_failure is not None and not params["after"]:
        inputs.on_parent_failure(on_parent_failure)  # a bad word is refused with or without parents
    sql = _create_sql(bool(params["after"]))

    def finish(rows: list[dict]) -> Created:
        if params["after"]:
            if rows[0]["refused_n"] is not None:
                raise dependencies.refusal(params["after"], rows[0]["refused_n"], rows[0]["refused_why"])
            rows = [row for row in rows if row["id"] is not None]
        if not rows:
            # The conflicting row committed after this statement's snapshot: ``todos.core.db.execute``
            # runs the statement again, and the next snapshot sees it.
            raise StaleSnapshot("a concurrent create with the same idempotency key is in flight; retry")
        return Created(todo=Todo.from_row(rows[0]), created=rows[0]["created"])

    return Statement(sql, params, finish)


def _create_sql(with_parents: bool) -> LiteralString:
    """The create statement. With parents it also reads and locks them, refuses a bad one
    (``refused``: nothing is inserted, and the one answer row names it) and writes the dependency
    rows; without, it is the statement it always was."""
    values: LiteralString = """VALUES ('td_' || replace(gen_random_uuid()::text, '-', ''), %(endpoint_id)s, %(queue)s,
            %(source)s, %(kind)s, %(title)s, %(payload)s, %(key)s, %(assignee)s, %(priority)s,
            %(max_attempts)s,
            -- a time already reached is "now": no schedule, claimable at once
            CASE WHEN %(not_before)s::timestamptz > now() THEN %(not_before)s::timestamptz END,
            %(concurrency_key)s, %(requires)s::text[], %(timeout_seconds)s, %(rate_key)s, %(traceparent)s)"""
    columns: LiteralString = "concurrency_key, requires,\n                       timeout_seconds, rate_key, traceparent"
    head: LiteralString = ""
    tail: LiteralString = ""
    if with_parents:
        values = f"""SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), %(endpoint_id)s, %(queue)s,
           %(source)s, %(kind)s, %(title)s, %(payload)s, %(key)s, %(assignee)s, %(priority)s,
           %(max_attempts)s,
           -- blocked (scheduled for never) while a parent is open; its own time waits aside
           {dependencies.BLOCKED_TIME},
           %(concurrency_key)s, %(requires)s::text[], %(timeout_seconds)s, %(rate_key)s, %(traceparent)s,
           (SELECT n FROM open_parents), %(on_parent_failure)s,
           {dependencies.OWN_TIME}
    WHERE NOT EXISTS (SELECT 1 FROM refused)"""
        columns = (
            "concurrency_key, requires, timeout_seconds,\n"
            "                       rate_key, traceparent, parents_left, on_parent_failure, run_at_after_block"
        )
        head = f"{dependencies.PARENTS},\n"
        tail = f",\n{dependencies.EDGES}"
    answer: LiteralString = f"""SELECT true AS created, {TODO_COLUMNS},
       {notify_ready("ins", "next_retry_at IS NULL")} AS notified
FROM ins
UNION ALL
SELECT false, {TODO_COLUMNS}, 0 FROM todos
WHERE %(key)s::text IS NOT NULL AND endpoint_id = %(endpoint_id)s AND idempotency_key = %(key)s
  AND {DEDUPE_PREDICATE}
  AND NOT EXISTS (SELECT 1 FROM ins)"""
    if with_parents:
        answer = f"""SELECT a.*, f.n AS refused_n, f.why AS refused_why
FROM (SELECT 1) one
LEFT JOIN ({answer}) a ON true
LEFT JOIN refused f ON true"""
    return f"""
WITH {head}ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       assignee, priority, max_attempts, next_retry_at, {columns})
    {values}
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE {DEDUPE_PREDICATE}
    DO NOTHING
    RETURNING *
),
logged AS ({log_todos(ChangeOp.CREATE, "ins", before=None, team="%(team_id)s")}){tail}
{answer}"""


# The fields of a new todo, as create_for and each item of create_batch take them.
CREATE_FIELDS = frozenset(
    {
        "queue", "title", "kind", "source", "payload", "idempotency_key", "assignee", "priority",
        "max_attempts", "run_at", "delay_seconds", "concurrency_key", "requires", "timeout_seconds", "rate_key",
        "traceparent",
    }
)  # fmt: skip
# …and what an item of create_batch may add: its parents (``after``), earlier items of the batch
# (``after_items``) and its rule (docs/lifecycle.md, "Dependencies").
DEPENDENCY_FIELDS = frozenset({"after", "after_items", "on_parent_failure"})
CREATE_BATCH_MAX = 1000


def _todo_fields(
    agent: AgentScope,
    *,
    queue: Any,
    title: Any,
    kind: Any = None,
    source: Any = None,
    payload: Any = None,
    idempotency_key: Any = None,
    assignee: Any = None,
    priority: Any = None,
    max_attempts: Any = None,
    run_at: Any = None,
    delay_seconds: Any = None,
    concurrency_key: Any = None,
    requires: Any = None,
    timeout_seconds: Any = None,
    rate_key: Any = None,
    traceparent: Any = None,
) -> dict:
    """A new todo's fields, checked (``Invalid`` naming the field; ``Forbidden`` for a queue outside
    the agent's scope)."""
    fields = {
        "queue": inputs.queue(queue),
        "title": inputs.title(title),
        "kind": inputs.label("kind", kind),
        "source": inputs.label("source", source),
        "payload": inputs.json_value("payload", payload),
        "key": inputs.idempotency_key(idempotency_key),
        "assignee": inputs.label("assignee", assignee),
        "priority": inputs.priority(priority),
        "max_attempts": inputs.max_attempts(max_attempts),
        "not_before": inputs.not_before(run_at, delay_seconds),
        "concurrency_key": inputs.concurrency_key(concurrency_key),
        "requires": inputs.capability_labels("requires", requires),
        "timeout_seconds": inputs.timeout_seconds(timeout_seconds),
        "rate_key": inputs.rate_key(rate_key),
        "traceparent": inputs.traceparent(traceparent),
    }
    if fields["queue"] not in agent.queues:
        raise Forbidden(f"queue {fields['queue']!r} is outside the scope of endpoint {agent.endpoint_id}")
    return fields


# A new todo's time when nothing blocks it: a time already reached is "now", claimable at once.
BATCH_TIME: LiteralString = """-- a time already reached is "now": no schedule, claimable at once
           CASE WHEN i.not_before > now() THEN i.not_before END"""


def create_batch(agent: AgentScope, items: Any) -> Statement[list[ItemResult]]:
    """Enqueue up to 1,000 todos for ``agent`` in one statement, each answered as ``create`` would.

    Every item is checked before anything is written: a bad one is ``Invalid`` naming
    ``items[i].field`` (an item outside the scope, ``Forbidden`` naming it), and nothing of the
    batch is written. Idempotent by key per item, within the batch too: a key that a live todo
    already covers, or that an earlier item of the batch took, answers that todo with
    ``created=False``. An item whose key a concurrent create took after this statement's snapshot
    is answered ``conflict`` (retry that item: the retry finds the todo); the others are written.
    Attempt rows: none. Log: none → ``pending`` per todo; waiting agents are woken, n per queue.
    """
    if not isinstance(items, (list, tuple)) or not 1 <= len(items) <= CREATE_BATCH_MAX:
        raise Invalid("items", f"must be a list of 1 to {CREATE_BATCH_MAX} items")
    rows = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise Invalid(f"items[{n}]", "must be an object")
        unknown = set(item) - CREATE_FIELDS - DEPENDENCY_FIELDS
        if unknown:
            raise Invalid(f"items[{n}].{sorted(unknown)[0]}", "is not a known field")
        fields = {k: v for k, v in item.items() if k not in DEPENDENCY_FIELDS}
        try:
            row = _todo_fields(agent, **{"queue": None, "title": None, **fields})
            row["after"] = inputs.after(item.get("after"))
            row["after_items"] = inputs.after_items(item.get("after_items"), n)
            waits = bool(row["after"] or row["after_items"])
            rule = inputs.on_parent_failure(item.get("on_parent_failure"))
            row["on_parent_failure"] = rule if waits else None
            rows.append(row)
        except Invalid as exc:
            raise Invalid(f"items[{n}].{exc.field}", exc.problem) from None
        except Forbidden as exc:
            raise Forbidden(f"items[{n}].queue: {exc.message}") from None

    def column(name: str) -> list:
        return [row[name] for row in rows]

    from psycopg.types.json import Jsonb

    params = {
        "endpoint_id": agent.endpoint_id,
        "team_id": agent.team_id,
        "queues": column("queue"),
        "titles": column("title"),
        "kinds": column("kind"),
        "sources": column("source"),
        "payloads": column("payload"),
        "keys": column("key"),
        "assignees": column("assignee"),
        "priorities": column("priority"),
        "max_attempts": column("max_attempts"),
        "not_befores": column("not_before"),
        "concurrency_keys": column("concurrency_key"),
        "timeouts": column("timeout_seconds"),
        "rate_keys": column("rate_key"),
        "traceparents": column("traceparent"),
        # One JSON array per item: PostgreSQL's arrays are rectangular, an item's labels are not.
        "requires": [Jsonb(row["requires"]) for row in rows],
    }
    waits = any(row["on_parent_failure"] for row in rows)
    if waits:
        params.update(
            afters=[Jsonb(row["after"]) for row in rows],
            after_items=[Jsonb(row["after_items"]) for row in rows],
            rules=column("on_parent_failure"),
            after=sorted({parent for row in rows for parent in row["after"]}),
        )
    sql = f"""
WITH item AS MATERIALIZED (
    SELECT i.*, 'td_' || replace(gen_random_uuid()::text, '-', '') AS id
    FROM unnest(%(queues)s::text[], %(titles)s::text[], %(kinds)s::text[], %(sources)s::text[],
                %(payloads)s::jsonb[], %(keys)s::text[], %(assignees)s::text[], %(priorities)s::integer[],
                %(max_attempts)s::integer[], %(not_befores)s::timestamptz[], %(concurrency_keys)s::text[],
                %(requires)s::jsonb[], %(timeouts)s::integer[], %(rate_keys)s::text[], %(traceparents)s::text[]{
        dependencies.BATCH_ITEM_ARRAYS if waits else ""
    })
         WITH ORDINALITY AS i(queue, title, kind, source, payload, key, assignee, priority, max_attempts,
                              not_before, concurrency_key, requires, timeout_seconds, rate_key, traceparent{
        dependencies.BATCH_ITEM_NAMES if waits else ""
    }, n)
),{dependencies.BATCH_PARENTS if waits else ""}
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       assignee, priority, max_attempts, next_retry_at, concurrency_key, requires, timeout_seconds,
                       rate_key, traceparent{dependencies.BATCH_COLUMNS if waits else ""})
    SELECT i.id, %(endpoint_id)s, i.queue, i.source, i.kind, i.title, i.payload, i.key, i.assignee,
           i.priority, i.max_attempts,
           {dependencies.BATCH_TIME if waits else BATCH_TIME},
           i.concurrency_key, ARRAY(SELECT jsonb_array_elements_text(i.requires)), i.timeout_seconds,
           i.rate_key, i.traceparent{dependencies.BATCH_VALUES if waits else ""}
    FROM item i{dependencies.BATCH_GUARD if waits else ""}
    ORDER BY i.n  -- the first item with a key takes it
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE {DEDUPE_PREDICATE}
    DO NOTHING
    RETURNING *
),
logged AS ({log_todos(ChangeOp.CREATE, "ins", before=None, team="%(team_id)s")}),
notified AS (SELECT {notify_ready("ins", "next_retry_at IS NULL")} AS n),
answer AS (
    -- per item: the todo it created, else the one holding its key (made by an earlier item of the
    -- batch, or live before it), else none (a concurrent create holds the key, not yet visible)
    SELECT i.n, i.id AS item_id, coalesce(mine.id, earlier.id, live.id) AS todo_id, mine.id IS NOT NULL AS created
    FROM item i
    LEFT JOIN ins mine ON mine.id = i.id
    LEFT JOIN LATERAL (SELECT e.id FROM ins e WHERE i.key IS NOT NULL AND e.idempotency_key = i.key) earlier
           ON mine.id IS NULL
    LEFT JOIN LATERAL (
        SELECT t.id FROM todos t
        WHERE i.key IS NOT NULL AND t.endpoint_id = %(endpoint_id)s AND t.idempotency_key = i.key
          AND {DEDUPE_PREDICATE}
    ) live ON mine.id IS NULL AND earlier.id IS NULL
){dependencies.BATCH_EDGES if waits else ""}
SELECT a.n, a.item_id, a.created, (SELECT n FROM notified) AS notified, r.*{dependencies.BATCH_REFUSED if waits else ""}
FROM answer a{" LEFT JOIN refused f ON true" if waits else ""}
LEFT JOIN LATERAL (
    SELECT {TODO_COLUMNS}
    FROM ins WHERE ins.id = a.todo_id
    UNION ALL
    -- a todo this statement did not write (its rows are not visible in todos here)
    SELECT {TODO_COLUMNS} FROM todos
    WHERE todos.id = a.todo_id AND NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = a.todo_id)
) r ON true
ORDER BY a.n"""

    def finish(result_rows: list[dict]) -> list[ItemResult]:
        if waits and result_rows and result_rows[0]["refused_item"] is not None:
            first = result_rows[0]
            item = rows[first["refused_item"]]
            field = f"items[{first['refused_item']}].{first['refused_field']}"
            if first["refused_field"] == "after":
                raise dependencies.refusal(item["after"], first["refused_n"], first["refused_why"], field)
            raise Invalid(
                f"{field}[{first['refused_n']}]",
                "that item's todo is already canceled, so it will never be done "
                "(on_parent_failure 'run' accepts it and does not wait for it)",
            )
        out = []
        for row in result_rows:
            if row["id"] is None:
                message = "a concurrent create with the same idempotency key is in flight; retry this item"
                out.append(ItemResult(id=row["item_id"], error=StoreErrorInfo("conflict", message)))
            else:
                out.append(ItemResult(id=row["id"], todo=Todo.from_row(row), created=row["created"]))
        return out

    return Statement(sql, params, finish)


# --- claims -----------------------------------------------------------------------------------


def _claim_params(
    agent: AgentScope, *, ttl: Any, claimant: Any, fence: Any, count: int, capabilities: Any = None
) -> tuple[dict, list]:
    if fence is not None and not isinstance(fence, bool):
        raise Invalid("require_fence", "must be a boolean")
    tokens: list[str | None] = []
    hashes: list[bytes | None] = []
    if fence:
        for _ in range(count):
            token, digest = inputs.new_lease_token()
            tokens.append(token)
            hashes.append(digest)
    params = {
        "endpoint_id": agent.endpoint_id,
        "team_id": agent.team_id,
        "owner": agent.owner,
        "ttl": inputs.lease_ttl(ttl, agent.default_lease_ttl_seconds),
        "claimant": inputs.claimant(claimant),
        "claimer_kind": "endpoint",
        "claimer_endpoint_id": agent.endpoint_id,
        "session": agent.session,
        "token_hashes": hashes,
        "cap": settings.BOARD_ATTEMPTS_CAP,
        "capabilities": presented_capabilities(agent, capabilities),
    }
    return params, tokens


def presented_capabilities(agent: AgentScope, capabilities: Any) -> list[str]:
    """What a claim presents: its own ``capabilities`` when it names any, else its endpoint's
    default capabilities (replaced, not merged: a worker that says what it can do is believed,
    so one endpoint can run a GPU worker and a plain one side by side)."""
    own = inputs.capability_labels("capabilities", capabilities)
    return own or list(agent.capabilities)


def capable(params: dict) -> LiteralString:
    """The claim's capability guard: the todo requires nothing beyond what the claim presents.

    A claim that presents nothing gets its own statement text with the literal ``requires = '{}'``:
    it is the common case, and PostgreSQL plans it exactly as before capabilities existed (the
    statistics say nearly every row has an empty array, and the filter rides on the same walk of
    ``todos_pending``). A bound array under ``<@`` would be estimated at 0.5 % of rows in a generic
    plan, which can steer the planner off that walk."""
    return "t.requires <@ %(capabilities)s::text[]" if params["capabilities"] else "t.requires = '{}'"


# Fresh work: the scoped, unpaused queues are tried best head first (the head read without locks:
# it only orders the attempts), and in each queue the pending rows in claim order (a walk of the
# ``todos_pending`` index), skipping rows other claimers hold. A claim in one queue (a worker's
# usual claim: ``queue=`` given, or an endpoint scoped to one queue) walks that queue directly:
# reading and ordering the heads first was a fifteenth of its CPU (bench/README.md, "One queue").
# The outer LIMIT stops the walk as soon as enough rows are locked, so a claim locks only what it
# takes: locking every queue's head (the per-queue scan this replaced) made concurrent multi-queue
# claimers skip each other's untaken heads and come back empty while work was waiting. Under
# contention the order across queues is approximate, as SKIP LOCKED makes it anyway. Recoverable
# work: lapsed leases, and due retries and schedules (few rows, each found through its own partial
# index).
# What each candidate scan reads of a todo: ``cand`` takes its prior state from them, and orders
# and numbers them; one list, so the three scans' UNION cannot drift apart.
CANDIDATE_COLUMNS: LiteralString = (
    "t.id, t.state, t.next_retry_at, t.claimed_at, t.concurrency_key, t.rate_key,\n           t.priority, t.created_at"
)


# Pending work that waits for no time: the ``todos_pending`` index's predicate.
PENDING_NOW: LiteralString = f"t.state = {TodoState.PENDING.sql} AND t.next_retry_at IS NULL"


def _pending_walk(
    queue: LiteralString, limit: LiteralString, capable: LiteralString, guard: LiteralString = ""
) -> LiteralString:
    """One queue's pending rows in claim order (a walk of ``todos_pending``), locking up to
    ``limit`` that pass ``capable`` and have key and rate room, skipping rows others hold.
    ``queue``: the SQL naming the queue; ``guard``: one more condition on the walk."""
    return f"""SELECT {CANDIDATE_COLUMNS}
    FROM todos t
    WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = {queue} AND {PENDING_NOW}
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND {capable}
      AND {KEY_HAS_ROOM}
      AND {RATE_HAS_ROOM}{guard}
    ORDER BY t.priority, t.created_at
    LIMIT {limit}
    FOR UPDATE SKIP LOCKED"""


def _fresh_by_queue_order(limit: LiteralString, capable: LiteralString) -> LiteralString:
    """Fresh work across the claim's queues (``%(queues)s``): the unpaused queues tried best head
    first, each queue's pending rows walked in claim order."""
    return f"""
queue_order AS (
    SELECT q.name, head.priority, head.created_at
    FROM (SELECT DISTINCT name FROM unnest(%(queues)s::text[]) AS u(name)) q
    CROSS JOIN LATERAL (
        SELECT t.priority, t.created_at FROM todos t
        WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = q.name AND {PENDING_NOW}
          AND (t.assignee IS NULL OR t.assignee = %(owner)s)
          AND {capable}
        ORDER BY t.priority, t.created_at
        LIMIT 1
    ) head
    WHERE {queue_not_paused("q.name")}
),
fresh AS (
    SELECT f.id, f.state, f.next_retry_at, f.claimed_at, f.concurrency_key, f.rate_key, f.priority, f.created_at
    FROM (SELECT name FROM queue_order ORDER BY priority, created_at) q
    CROSS JOIN LATERAL (
    {_pending_walk("q.name", limit, capable)}
    ) f
    LIMIT {limit}
)"""


def _fresh_one_queue(limit: LiteralString, capable: LiteralString) -> LiteralString:
    """Fresh work in one queue (``%(queue)s``): its pending rows walked in claim order, with no
    heads to read and order first. Its pause is an uncorrelated sub-select, so PostgreSQL reads it
    once, before the walk, and skips the walk when the queue is paused."""
    pause: LiteralString = f"\n      AND {queue_not_paused('%(queue)s')}"
    return f"""
fresh AS (
    {_pending_walk("%(queue)s", limit, capable, pause)}
)"""


@functools.lru_cache(maxsize=256)
def agent_candidates(
    limit: LiteralString, capable: LiteralString = "t.requires = '{}'", *, one_queue: bool = False
) -> LiteralString:
    """The candidates CTEs, taking at most ``limit`` (an SQL integer literal) todos that pass
    ``capable`` (the capability guard, :func:`capable`). ``one_queue``: the claim names a single
    queue (``%(queue)s``), whose pending rows are walked directly (:func:`_fresh_one_queue`)."""
    fresh = _fresh_one_queue(limit, capable) if one_queue else _fresh_by_queue_order(limit, capable)
    return f"""{fresh},
lapsed AS (
    -- a lapsed lease under the attempt cap: a plain walk of ``todos_claimed`` (a bitmap scan of
    -- it could not mark the entries of finished todos dead, and revisited them all on every claim)
    SELECT {CANDIDATE_COLUMNS} FROM todos t
    WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = {TodoState.CLAIMED.sql} AND t.lease_expires_at < now() AND t.attempt < t.max_attempts
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND {capable}
      AND {RATE_HAS_ROOM}
      AND {NOT_PAUSED}
    ORDER BY t.priority, t.created_at
    LIMIT {limit}
    FOR UPDATE SKIP LOCKED
),
due AS (
    -- a due retry or a scheduled todo whose time has come (``todos_retry_due``)
    SELECT {CANDIDATE_COLUMNS} FROM todos t
    WHERE t.next_retry_at <= now() AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND (t.state = {TodoState.PENDING.sql} OR (t.state = {TodoState.FAILED.sql} AND t.attempt < t.max_attempts))
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND {capable}
      AND {KEY_HAS_ROOM}
      AND {RATE_HAS_ROOM}
      AND {NOT_PAUSED}
    ORDER BY t.priority, t.created_at
    LIMIT {limit}
    FOR UPDATE SKIP LOCKED
),
cand AS (
    SELECT id, state AS prior_state, next_retry_at AS prior_not_before, claimed_at AS prior_claimed_at,
           concurrency_key, rate_key, row_number() OVER (ORDER BY priority, created_at, id)::int AS ord,
           %(team_id)s::uuid AS team_id
    FROM (SELECT * FROM fresh UNION ALL SELECT * FROM lapsed UNION ALL SELECT * FROM due) c
    -- the endpoint's claims are not paused: read once, before any of the scans locks a row
    WHERE {CLAIMS_OPEN}
    ORDER BY priority, created_at, id
    LIMIT {limit}
)"""


def claim_next(
    agent: AgentScope,
    *,
    queue: Any = None,
    lease_ttl_seconds: Any = None,
    claimant: Any = None,
    require_fence: Any = False,
    capabilities: Any = None,
) -> Statement[Claim | None]:
    """Lease the next claimable todo in the agent's queues (or ``queue``).

    Guard: claimable (pending; a lapsed lease under the attempt cap; a due retry), assignee empty
    or this endpoint, queue not paused; oldest by ``(priority, created_at)``; ``FOR UPDATE SKIP
    LOCKED`` so concurrent claimers never wait for or share a row. Capabilities: the todo's
    ``requires`` is a subset of what the claim presents (``capabilities``, or the endpoint's
    defaults when it presents none): a claim presenting nothing takes only todos needing nothing.
    Attempt rows: a takeover closes the old one ``lease_expired``/``requeued``; a new one opens.
    """
    return _claim_batch_statement(
        agent, queue, 1, lease_ttl_seconds, claimant, require_fence, capabilities, single=True
    )


def claim_batch(
    agent: AgentScope,
    *,
    max: Any,
    queue: Any = None,
    lease_ttl_seconds: Any = None,
    claimant: Any = None,
    require_fence: Any = False,
    capabilities: Any = None,
) -> Statement[list[Claim]]:
    """Lease up to ``max`` (1..100) claimable todos in one statement; the guard is claim_next's."""
    count = inputs.require_int("max", max, 1, 100)
    return _claim_batch_statement(
        agent, queue, count, lease_ttl_seconds, claimant, require_fence, capabilities, single=False
    )


def _claim_batch_statement(agent, queue, count, ttl, claimant, fence, capabilities, *, single) -> Statement[Any]:
    queues = _queues_for(agent, queue)
    params, tokens = _claim_params(
        agent, ttl=ttl, claimant=claimant, fence=fence, count=count, capabilities=capabilities
    )
    params["queues"] = queues
    one_queue = len(set(queues)) == 1
    if one_queue:
        params["queue"] = queues[0]
    # The limit is a literal in the SQL, not a parameter: with it bound PostgreSQL re-plans the
    # claim on every call (its generic plan would scan the table), which tripled the claim's CPU
    # (bench/README.md). ``count`` is a validated int in 1..100 (one statement text per value).
    sql = claim_sql(
        agent_candidates(compose.integer(count), capable(params), one_queue=one_queue),
        with_prior=single,
        endpoint=True,
        seen=seen_sql(agent.endpoint_id),
    )

    def finish(rows: list[dict]):
        claims = claims_from_rows(rows, tokens)
        if single:
            return claims[0] if claims else None
        return claims

    return Statement(sql, params, finish)


def claim(
    agent: AgentScope,
    todo_id: Any,
    *,
    lease_ttl_seconds: Any = None,
    claimant: Any = None,
    require_fence: Any = False,
    capabilities: Any = None,
) -> Statement[Claim]:
    """Lease one todo by id.

    Guard: claimable, assignee empty or this endpoint, queue not paused, its ``requires`` within
    the presented capabilities (as claim_next; a todo needing more is a conflict naming the missing
    labels); waits on the row lock, so of several concurrent claims exactly one wins and the rest
    see a claimed todo (conflict).
    Attempt rows: as claim_next.
    """
    params, tokens = _claim_params(
        agent, ttl=lease_ttl_seconds, claimant=claimant, fence=require_fence, count=1, capabilities=capabilities
    )
    params.update(id=inputs.todo_id(todo_id), queues=list(agent.queues))
    cand = f"""
target AS (SELECT t.requires FROM todos t WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s),
cand AS (
    SELECT t.id, t.state AS prior_state, t.next_retry_at AS prior_not_before, t.claimed_at AS prior_claimed_at,
           t.concurrency_key, t.rate_key, 1 AS ord, %(team_id)s::uuid AS team_id
    FROM todos t
    WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND {CLAIMABLE}
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND {capable(params)}
      AND {NOT_PAUSED}
      AND {CLAIMS_OPEN}
    FOR UPDATE
)"""
    # a miss also says which of the todo's requirements the claim did not present
    sql = claim_sql(
        cand,
        with_prior=True,
        miss=agent_miss(),
        # read only on a miss
        extra="CASE WHEN r.id IS NULL THEN (SELECT tg.requires FROM target tg) END AS target_requires",
        endpoint=True,
        seen=seen_sql(agent.endpoint_id),
    )

    def finish(rows: list[dict]) -> Claim:
        row = rows[0]
        if row["id"] is None:
            claims_from_rows([row], tokens)  # a paused endpoint's claim is refused ``paused``
            missing = sorted(set(row["target_requires"] or ()) - set(params["capabilities"]))
            if row["miss"] == "conflict" and missing:
                raise Conflict(
                    f"the todo requires capabilities this claim does not present: {', '.join(missing)} "
                    f"(capabilities, or the endpoint's default capabilities): {params['id']}"
                )
            _raise_miss(row["miss"], "claim", params["id"])
        return claims_from_rows([row], tokens)[0]

    return Statement(sql, params, finish)


# --- reports: heartbeat, complete, fail, release ----------------------------------------------


def _report_params(
    agent: AgentScope,
    todo_id: Any,
    *,
    lease_token: Any,
    summary: Any = None,
    artifact: Any = None,
    result: Any = None,
    with_result: bool = True,
) -> dict:
    text, truncated = inputs.summary(summary)
    params = {
        "id": inputs.todo_id(todo_id),
        "endpoint_id": agent.endpoint_id,
        "team_id": agent.team_id,
        "owner": agent.owner,
        "queues": list(agent.queues),
        "token_hash": inputs.lease_token_hash(lease_token),
        "summary": text,
        "summary_truncated": truncated,
        "artifact": inputs.artifact(artifact),
        "result": inputs.json_value("result", result) if with_result else None,
    }
    if params["summary"] is None and settings.BOARD_ATTEMPT_SUMMARY_FROM_RESULT and params["result"] is not None:
        import json

        params["summary"], params["summary_truncated"] = inputs.cut_utf8(
            json.dumps(result, separators=(",", ":")), inputs.SUMMARY_MAX_BYTES
        )
    return params


AGENT_HOLDS: LiteralString = f"""t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = {TodoState.CLAIMED.sql} AND t.owner = %(owner)s AND {FENCE}"""


def _report_statement(
    verb: ChangeOp,
    set_todo: LiteralString,
    close_attempt: LiteralString,
    params: dict,
    ready_when: LiteralString | None,
    after: LoggedState = ROW_STATE,
    finished: LiteralString | None = None,
    done: bool = True,
    guard: LiteralString = "",
) -> Statement[Todo]:
    """One report on a held lease. ``after`` is the Board state the report leaves, where it is
    one constant (the log then computes nothing per row); by default it is read from the row.
    ``finished`` (a FROM clause over ``upd``) are the todos it finished: their children are
    settled (``done``: they are done, ``fragments.children_done``; else dead, ``children_failed``). ``guard`` is SQL
    the held todo ``t`` must also pass (``AND …``)."""
    sql = _report_sql(
        verb, set_todo, close_attempt, ready_when, after, finished, done, guard, seen_sql(params["endpoint_id"])
    )

    def finish(rows: list[dict]) -> Todo:
        row = rows[0]
        if row["id"] is None:
            _raise_miss(row["miss"], verb, params["id"])
        return Todo.from_row(row)

    return Statement(sql, params, finish)


@functools.lru_cache(maxsize=256)
def _report_sql(
    verb: ChangeOp,
    set_todo: LiteralString,
    close_attempt: LiteralString,
    ready_when: LiteralString | None,
    after: LoggedState,
    finished: LiteralString | None,
    done: bool,
    guard: LiteralString,
    seen: LiteralString,
) -> LiteralString:
    """The text of :func:`_report_statement`'s statement: a few shapes, each composed once (the
    composition cost a worker's report more client CPU than reading its answer)."""
    ready = f",\n           {notify_ready('upd', ready_when)}" if ready_when else ", 0"
    children: LiteralString = ""
    woken: LiteralString = ""
    if finished is not None and done:
        woken = f",\n           {children_done(finished)} AS woken"
    elif finished is not None:
        children = f",\n{children_failed(finished)}"
        woken = f",\n           {children_woken()} AS woken"
    return f"""
WITH {seen}upd AS (
    UPDATE todos t SET {set_todo}, updated_at = now()
    WHERE {AGENT_HOLDS}{guard}
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET {close_attempt}
    FROM upd u
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
    RETURNING a.todo_id
),
logged AS ({log_todos(verb, "upd", before=BoardState.CLAIMED, after=after, team="%(team_id)s")}){children},
result AS (
    SELECT {TODO_COLUMNS},
           (SELECT count(*) FROM closed) AS closed{ready} AS notified{woken}
    FROM upd
)
SELECT r.*, {agent_miss()} AS miss
FROM (SELECT 1) one LEFT JOIN result r ON true"""


def heartbeat(
    agent: AgentScope, todo_id: Any, *, lease_ttl_seconds: Any = None, lease_token: Any = None
) -> Statement[Todo]:
    """Extend the lease. Guard: claimed, held by this endpoint, fence, and the attempt has not run
    past its run-time limit (docs/lifecycle.md, "Run-time limits": past it, the lease is lost and
    the sweep ends the attempt ``timed_out``; a miss writes nothing).
    Attempt row: stamps ``last_heartbeat_at`` and the new ``lease_expires_at`` (it stays open).
    Writes no indexed column, so the todo's update is HOT. Log: ``claimed`` → ``claimed``."""
    params = _report_params(agent, todo_id, lease_token=lease_token, with_result=False)
    params["ttl"] = inputs.lease_ttl(lease_ttl_seconds, agent.default_lease_ttl_seconds)
    return _report_statement(
        ChangeOp.HEARTBEAT,
        "lease_expires_at = now() + make_interval(secs => %(ttl)s)",
        "last_heartbeat_at = now(), lease_expires_at = u.lease_expires_at",
        params,
        ready_when=None,
        after=BoardState.CLAIMED,
        guard=f"\n      AND {WITHIN_RUN_TIME_LIMIT}",
    )


REPORT_FIELDS: LiteralString = (
    "summary = %(summary)s, summary_truncated = %(summary_truncated)s, artifact = %(artifact)s"
)


# The error object a holder reports with complete or fail (``inputs.error_object``), written on
# the attempt the report closes; NULL when it reported none.
ERROR_FIELD: LiteralString = "error = %(error)s"
# The worker's trace context on the attempt its complete or fail closes (docs/telemetry.md).
TRACE_FIELD: LiteralString = "traceparent = %(traceparent)s"
# What the report's attempt said, parsed for the search box (``fragments.search_document``).
REPORT_DOCUMENT: LiteralString = search_document("%(error)s::attempt_error", "%(summary)s::attempt_summary")


def report_document(params: dict[str, Any]) -> LiteralString:
    """:data:`REPORT_DOCUMENT`, or NULL for a report that says nothing (no summary, no error
    object), whose document is NULL by its definition: the statement of a plain complete or fail
    then leaves the expression (and the subquery that reads its values once) out of its plan."""
    if params["summary"] is None and params["error"] is None:
        return "search_doc = NULL"
    return REPORT_DOCUMENT


def complete(
    agent: AgentScope,
    todo_id: Any,
    *,
    result: Any = None,
    summary: Any = None,
    artifact: Any = None,
    lease_token: Any = None,
    error: Any = None,
    traceparent: Any = None,
) -> Statement[Todo]:
    """Finish the work. Guard: claimed, held by this endpoint, fence.
    Effect: ``done``, result stored, lease cleared. Attempt row: closed ``completed``/``done``,
    with its summary, artifact, error object (a completion may still report an error, e.g.
    one it recovered from) and the worker's ``traceparent`` (docs/telemetry.md). A miss writes
    nothing, the error object included. Log: ``claimed`` → ``done``."""
    params = _report_params(agent, todo_id, lease_token=lease_token, summary=summary, artifact=artifact, result=result)
    params["error"] = inputs.error_object(error)
    params["traceparent"] = inputs.traceparent(traceparent)
    return _report_statement(
        ChangeOp.COMPLETE,
        f"""state = {TodoState.DONE.sql}, result = %(result)s, owner = NULL, lease_expires_at = NULL,
            completed_at = now()""",
        f"""ended_at = now(), outcome = 'completed', disposition = 'done',
            {REPORT_FIELDS},
            {ERROR_FIELD}, {TRACE_FIELD},
            {report_document(params)}""",
        params,
        ready_when=None,
        after=BoardState.DONE,
        finished="upd",
    )


def fail(
    agent: AgentScope,
    todo_id: Any,
    *,
    result: Any = None,
    summary: Any = None,
    artifact: Any = None,
    lease_token: Any = None,
    error: Any = None,
    traceparent: Any = None,
) -> Statement[Todo]:
    """Report a failure. Guard: claimed, held by this endpoint, fence.
    Effect: ``failed``; a retry window (backoff) below the attempt cap, else a dead letter.
    Attempt row: closed ``failed``/``retry_scheduled`` or ``failed``/``dead_lettered``, with its
    summary, artifact, error object (why it failed) and the worker's ``traceparent``. A miss
    writes nothing. Log: ``claimed`` → ``retry`` or ``dead``."""
    params = _report_params(agent, todo_id, lease_token=lease_token, summary=summary, artifact=artifact, result=result)
    params["error"] = inputs.error_object(error)
    params["traceparent"] = inputs.traceparent(traceparent)
    return _report_statement(
        ChangeOp.FAIL,
        f"""state = {TodoState.FAILED.sql}, result = %(result)s, owner = NULL, lease_expires_at = NULL,
            {stored_reason_group("%(error)s::jsonb", "%(summary)s::text", "%(result)s::jsonb->>'error'")},
            next_retry_at = CASE WHEN t.attempt < t.max_attempts
                THEN now() + {BACKOFF} END,
            completed_at = CASE WHEN t.attempt < t.max_attempts THEN NULL ELSE now() END""",
        f"""ended_at = now(), outcome = 'failed',
            disposition = CASE WHEN u.next_retry_at IS NULL THEN 'dead_lettered' ELSE 'retry_scheduled' END,
            {REPORT_FIELDS},
            {ERROR_FIELD}, {TRACE_FIELD},
            {report_document(params)}""",
        params,
        ready_when=None,
        finished="(SELECT id FROM upd WHERE next_retry_at IS NULL)",
        done=False,
    )


def release(
    agent: AgentScope, todo_id: Any, *, summary: Any = None, artifact: Any = None, lease_token: Any = None
) -> Statement[Todo]:
    """Give the lease back. Guard: claimed, held by this endpoint, fence.
    Effect: ``pending``, owner and lease cleared, ``attempt`` unchanged (the budget is spent).
    Attempt row: closed ``released``/``requeued``. Log: ``claimed`` → ``pending``; waiting agents
    are woken."""
    params = _report_params(
        agent, todo_id, lease_token=lease_token, summary=summary, artifact=artifact, with_result=False
    )
    return _report_statement(
        ChangeOp.RELEASE,
        f"state = {TodoState.PENDING.sql}, owner = NULL, lease_expires_at = NULL",
        f"""ended_at = now(), outcome = 'released', disposition = 'requeued',
            {REPORT_FIELDS},
            {search_document("a.error", "%(summary)s::attempt_summary")}""",
        params,
        ready_when="TRUE",
        after=BoardState.PENDING,
    )


def complete_batch(agent: AgentScope, items: Any) -> Statement[list[ItemResult]]:
    """Complete up to 100 todos in one statement; each miss is classified as ``complete`` would.

    Guard per item: complete's. Attempt rows: each closed ``completed``/``done``, with the item's
    summary, artifact, error object and ``traceparent`` as complete stores them. Log: as complete.
    """
    if not isinstance(items, (list, tuple)) or not 1 <= len(items) <= 100:
        raise Invalid("items", "must be a list of 1 to 100 items")
    ids, results, summaries, truncs, artifacts, hashes, contexts, errors = [], [], [], [], [], [], [], []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise Invalid(f"items[{n}]", "must be an object")
        unknown = set(item) - {"id", "result", "summary", "artifact", "lease_token", "traceparent", "error"}
        if unknown:
            raise Invalid(f"items[{n}].{sorted(unknown)[0]}", "is not a known field")
        try:
            p = _report_params(
                agent,
                item.get("id"),
                lease_token=item.get("lease_token"),
                summary=item.get("summary"),
                artifact=item.get("artifact"),
                result=item.get("result"),
            )
            error = inputs.error_object(item.get("error"))
        except Invalid as exc:
            raise Invalid(f"items[{n}].{exc.field}", exc.problem) from None
        if p["id"] in ids:
            raise Invalid(f"items[{n}].id", "appears twice in the batch")
        ids.append(p["id"])
        results.append(p["result"].obj if p["result"] is not None else None)
        summaries.append(p["summary"])
        truncs.append(p["summary_truncated"])
        artifacts.append(p["artifact"])
        hashes.append(p["token_hash"])
        contexts.append(inputs.traceparent(item.get("traceparent"), f"items[{n}].traceparent"))
        errors.append(error)
    from psycopg.types.json import Jsonb

    params = {
        "endpoint_id": agent.endpoint_id,
        "team_id": agent.team_id,
        "owner": agent.owner,
        "queues": list(agent.queues),
        "ids": ids,
        "results": [Jsonb(r) if r is not None else None for r in results],
        "summaries": summaries,
        "truncs": truncs,
        "artifacts": artifacts,
        "hashes": hashes,
        "traceparents": contexts,
        "errors": errors,
    }
    sql = f"""
WITH item AS (
    SELECT * FROM unnest(%(ids)s::text[], %(results)s::jsonb[], %(summaries)s::text[],
                         %(truncs)s::boolean[], %(artifacts)s::text[], %(hashes)s::bytea[],
                         %(traceparents)s::text[], %(errors)s::jsonb[])
           WITH ORDINALITY AS i(id, result, summary, summary_truncated, artifact, token_hash, traceparent, error, n)
),
{seen_sql(agent.endpoint_id)}upd AS (
    UPDATE todos t SET state = {TodoState.DONE.sql}, result = i.result, owner = NULL, lease_expires_at = NULL,
                       completed_at = now(), updated_at = now()
    FROM item i
    WHERE t.id = i.id AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = {TodoState.CLAIMED.sql} AND t.owner = %(owner)s
      AND EXISTS (SELECT 1 FROM todo_attempts fa
                  WHERE fa.todo_id = t.id AND fa.seq = t.attempts_total AND fa.ended_at IS NULL
                    AND ((fa.lease_token_hash IS NULL AND i.token_hash IS NULL)
                         OR fa.lease_token_hash = i.token_hash))
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'completed', disposition = 'done',
        summary = i.summary, summary_truncated = i.summary_truncated, artifact = i.artifact,
        error = i.error, traceparent = i.traceparent,
        {search_document("i.error", "i.summary")}
    FROM upd u JOIN item i ON i.id = u.id
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),
logged AS ({log_todos(ChangeOp.COMPLETE, "upd", before=BoardState.CLAIMED, after=BoardState.DONE, team="%(team_id)s")}),
answered AS (SELECT {TODO_COLUMNS} FROM upd)
SELECT i.id AS item_id, i.n, u.*, {children_done("upd")} AS woken,
       CASE WHEN u.id IS NOT NULL THEN NULL
            WHEN tt.id IS NULL THEN 'not_found'
            WHEN NOT tt.queue = ANY(%(queues)s::text[]) THEN 'forbidden'
            ELSE 'conflict' END AS miss
FROM item i
LEFT JOIN answered u ON u.id = i.id
LEFT JOIN todos tt ON tt.id = i.id AND tt.endpoint_id = %(endpoint_id)s
ORDER BY i.n"""

    def finish(rows: list[dict]) -> list[ItemResult]:
        out = []
        for row in rows:
            if row["miss"] is None:
                out.append(ItemResult(id=row["item_id"], todo=Todo.from_row(row)))
            else:
                message = MISS_MESSAGES[row["miss"]].format(verb=ChangeOp.COMPLETE) + f": {row['item_id']}"
                out.append(ItemResult(id=row["item_id"], error=StoreErrorInfo(row["miss"], message)))
        return out

    return Statement(sql, params, finish)

"""The claim statement, shared by every way of taking a lease (agent, batch, human).

A claim's candidate query differs by caller; what it does to the rows does not. ``claim_sql``
wraps a candidate CTE (``cand(id, prior_state, prior_not_before, prior_claimed_at,
concurrency_key, rate_key, ord, team_id)``, rows already locked; ``team_id`` is the todo's team, which an
agent's claim binds and a person's reads) in the rest of the statement:

* a takeover (the candidate was ``claimed`` with a lapsed lease) closes the old attempt
  ``lease_expired`` / ``requeued``;
* the todo becomes ``claimed`` under a fresh lease: ``attempt`` and ``attempts_total`` grow by
  one, the retry window is cleared;
* an attempt opens with ``seq`` = the new ``attempts_total``;
* past the attempt cap, the oldest closed attempts are deleted and counted in ``attempts_pruned``
  (``todo_prune_attempts``, 0039, called from the UPDATE only then);
* the change log records each claim (``pending``/``retry`` → ``claimed``; a takeover ``claimed`` →
  ``claimed``). No NOTIFY: a claim's commit never waits for the notify lock.

The one-open-attempt rule is a deferred exclusion constraint checked at COMMIT, so the order in
which PostgreSQL runs these CTEs does not matter.
"""

from __future__ import annotations

import functools
from typing import LiteralString

from todos.core import compose
from todos.core.errors import Paused
from todos.core.store.endpoint_gate import paused_by
from todos.core.store.fragments import log_todos
from todos.core.store.records import TODO_COLUMNS, Attempt, Claim, Todo
from todos.core.words import BoardState, ChangeOp, TodoState

PRIOR_ATTEMPTS_LIMIT = 5

# An endpoint's claim that took nothing also says in how many seconds the soonest rate key with
# pending work of the endpoint gets an allowance back (NULL: no limited key holds its work), so a
# long poll waits until then and no longer (docs/lifecycle.md, "Rate limits"). Read only on a miss,
# by ``endpoint_rate_refill_in`` (0037), with the claim's snapshot: 0 (or less) when it shows the
# key with room, because the claim lost the allowance (or the rows) to a concurrent one, whose ring
# this snapshot does not see; the long poll looks again soon.
REFILL_IN: LiteralString = "CASE WHEN r.id IS NULL THEN endpoint_rate_refill_in(%(endpoint_id)s, %(team_id)s) END"


@functools.lru_cache(maxsize=256)  # a few shapes, each composed once
def claim_sql(
    cand: LiteralString,
    *,
    with_prior: bool,
    miss: LiteralString | None = None,
    extra: LiteralString | None = None,
    endpoint: bool = False,
    seen: LiteralString = "",
) -> LiteralString:
    """The claim statement around ``cand``. With ``miss`` (a CASE expression classifying a
    zero-row outcome) it always answers exactly one row: the claim, or the miss (with ``extra``,
    more columns that explain it).

    ``endpoint``: an endpoint's claim (``%(endpoint_id)s``), which always answers at least one
    row: the claims, or one row with ``id`` NULL whose ``paused`` says who paused the endpoint's
    claims (NULL: nothing was claimable) and ``refill_in`` when a throttled rate key refills.
    ``cand`` is then guarded by ``endpoint_gate.CLAIMS_OPEN``;
    ``seen`` is ``endpoint_gate.seen_sql``, the ``last_seen_at`` stamp when one is due."""
    columns: LiteralString = ""  # more columns, each on its own line
    if endpoint:
        columns += f",\n       {paused_by()} AS paused"
        columns += f",\n       {REFILL_IN} AS refill_in"
    if extra:
        columns += f",\n       {extra}"
    if miss is not None:
        sep: LiteralString = "\n" if columns else " "
        final = f"SELECT r.*, {miss} AS miss{columns}{sep}FROM (SELECT 1) one LEFT JOIN result r ON true"
    elif endpoint:
        final = f"SELECT r.*{columns}\nFROM (SELECT 1) one LEFT JOIN result r ON true\nORDER BY r.ord"
    else:
        final = "SELECT * FROM result ORDER BY ord"
    # the newest attempts ended before this claim, and the one it closes (a takeover); a first
    # claim has none and makes no call (todo_prior_attempts, 0039). The statement's snapshot still
    # holds the attempts todo_prune_attempts deletes: ``above_seq`` leaves them out.
    prior: LiteralString = (
        f"""CASE WHEN u.attempts_total > 1
                THEN todo_prior_attempts(u.id, u.attempts_total - %(cap)s, {compose.integer(PRIOR_ATTEMPTS_LIMIT)},
                                         (SELECT to_json(c) FROM closed c WHERE c.todo_id = u.id))
                ELSE '[]'::json END"""
        if with_prior
        else "'[]'::json"
    )
    logged = log_todos(
        ChangeOp.CLAIM,
        "upd",
        before="r.prior_board_state",
        after=BoardState.CLAIMED,
        # the first claim ends the todo's wait; a takeover ends the lapsed attempt
        waited="CASE WHEN r.attempts_total = 1 THEN extract(epoch FROM now() - r.created_at)::double precision END",
        ended=f"r.prior_state = {TodoState.CLAIMED.sql}",
        # ``r.claimed_at`` is this claim's; the lapsed attempt began at the todo's claimed_at before it
        ran_since="r.prior_claimed_at",
        team="r.claim_team",
    )
    return f"""
WITH {cand},
{seen}taken AS MATERIALIZED (
    -- the candidates this claim takes: unkeyed ones, takeovers (the lapsed holder's slot passes
    -- to them), and keyed ones whose key gave a slot (take_concurrency_slot, 0017: it waits for
    -- the key's row and re-checks the limit on its newest version). Keys are tried in (team, key)
    -- order, so two claims never wait on each other's key rows in opposite orders (a batch
    -- completion giving slots back can: todos.core.db.execute runs a deadlock's victim again);
    -- MATERIALIZED, so each candidate asks once. A rate-keyed candidate (a takeover too: it runs
    -- the work again) first takes an allowance of its key (take_rate_allowance, 0025), in the
    -- CASE so that one without an allowance never takes a concurrency slot it would not use.
    SELECT c.id, c.prior_state, c.prior_claimed_at, c.ord, c.team_id,
           CASE WHEN c.prior_state = {TodoState.FAILED.sql} THEN {BoardState.RETRY.sql}
                WHEN c.prior_state = {TodoState.PENDING.sql} AND c.prior_not_before IS NOT NULL
                THEN {BoardState.SCHEDULED.sql}
                ELSE c.prior_state END AS prior_board_state
    FROM (SELECT * FROM cand ORDER BY team_id, rate_key, concurrency_key, ord) c
    WHERE CASE WHEN c.rate_key IS NOT NULL AND NOT take_rate_allowance(c.team_id, c.rate_key) THEN false
               ELSE c.concurrency_key IS NULL OR c.prior_state = {TodoState.CLAIMED.sql}
                    OR take_concurrency_slot(c.team_id, c.concurrency_key) END
),
closed AS (
    -- takeover of a lapsed lease: the dead holder's attempt ends lease_expired / requeued
    UPDATE todo_attempts a
    SET ended_at = now(), outcome = 'lease_expired', disposition = 'requeued'
    FROM taken c
    WHERE a.todo_id = c.id AND c.prior_state = {TodoState.CLAIMED.sql} AND a.ended_at IS NULL
    RETURNING a.*
),
upd AS (
    UPDATE todos t SET
        state = {TodoState.CLAIMED.sql},
        owner = %(owner)s,
        lease_expires_at = now() + make_interval(secs => %(ttl)s),
        attempt = t.attempt + 1,
        attempts_total = t.attempts_total + 1,
        -- the attempt cap: keep the newest %(cap)s attempts, deleting the older ended ones
        -- (todo_prune_attempts, 0039: called only past the cap)
        attempts_pruned = t.attempts_pruned + CASE
            WHEN t.attempts_total + 1 > %(cap)s THEN todo_prune_attempts(t.id, t.attempts_total + 1 - %(cap)s)
            ELSE 0 END,
        claimed_at = now(),
        next_retry_at = NULL,
        updated_at = now()
    FROM taken c
    WHERE t.id = c.id
    RETURNING t.*, c.prior_state, c.prior_board_state, c.prior_claimed_at, c.ord, c.team_id AS claim_team
),
logged AS (
    -- a claimable failed todo is a due retry ('retry'); a pending one with a time, 'scheduled'
    {logged}
),
opened AS (
    -- the new attempt: seq = attempts_total after the increment (no sequence, no max(seq) scan)
    INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, claimer_endpoint_id,
                               claimer_session, owner, claimant, claimed_at, lease_expires_at,
                               lease_token_hash)
    SELECT u.id, u.attempts_total, u.attempt, %(claimer_kind)s, %(claimer_endpoint_id)s,
           %(session)s, u.owner, %(claimant)s, now(), u.lease_expires_at,
           (%(token_hashes)s::bytea[])[u.ord]
    FROM upd u
    RETURNING todo_id
),
result AS (
    SELECT {TODO_COLUMNS},
           u.prior_state, u.ord, {prior} AS prior_attempts,
           -- the attempt's run-time limit: the todo's own, else its team's default for its queue
           -- (docs/lifecycle.md, "Run-time limits"); one primary-key probe per claimed todo
           coalesce(u.timeout_seconds, (SELECT qs.timeout_seconds FROM queue_settings qs
                                        WHERE qs.team_id = u.claim_team AND qs.queue = u.queue)) AS run_time_limit,
           (SELECT count(*) FROM opened) AS opened
    FROM upd u
)
{final}"""


def claims_from_rows(rows: list[dict], tokens: list[str | None]) -> list[Claim]:
    """The claims of ``rows``; an endpoint's claim that took nothing answers a row with ``id``
    NULL, refused :class:`~todos.core.errors.Paused` when its ``paused`` says so."""
    claims = []
    for row in rows:
        if row["id"] is None:
            if row.get("paused"):
                raise Paused(row["paused"]["by"], row["paused"]["at"])
            continue
        todo = Todo.from_row(row)
        claims.append(
            Claim(
                todo=todo,
                attempt_seq=todo.attempts_total,
                attempts_total=todo.attempts_total,
                lease_token=tokens[row["ord"] - 1] if tokens else None,
                prior_attempts=tuple(Attempt.from_row(a) for a in row["prior_attempts"]),
                took_over=row["prior_state"] == TodoState.CLAIMED,
                timeout_seconds=row["run_time_limit"],
            )
        )
    return claims

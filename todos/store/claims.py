"""The claim statement, shared by every way of taking a lease (agent, batch, human).

A claim's candidate query differs by caller; what it does to the rows does not. ``claim_sql``
wraps a candidate CTE (``cand(id, prior_state, prior_not_before, concurrency_key, ord)``, rows
already locked) in the rest of the statement:

* a takeover (the candidate was ``claimed`` with a lapsed lease) closes the old attempt
  ``lease_expired`` / ``requeued``;
* the todo becomes ``claimed`` under a fresh lease: ``attempt`` and ``attempts_total`` grow by
  one, the retry window is cleared;
* an attempt opens with ``seq`` = the new ``attempts_total``;
* past the attempt cap, the oldest closed attempts are deleted and counted in ``attempts_pruned``;
* the change log records each claim (``pending``/``retry`` → ``claimed``; a takeover ``claimed`` →
  ``claimed``). No NOTIFY: a claim's commit never waits for the notify lock.

The one-open-attempt rule is a deferred exclusion constraint checked at COMMIT, so the order in
which PostgreSQL runs these CTEs does not matter.
"""

from __future__ import annotations

from typing import LiteralString

from todos.sql import compose
from todos.store.fragments import OPEN_ATTEMPT_CLAIMED_AT, log_todos
from todos.store.records import ATTEMPT_COLUMNS, TODO_COLUMNS, Attempt, Claim, Todo

PRIOR_ATTEMPTS_LIMIT = 5


def claim_sql(
    cand: LiteralString, *, with_prior: bool, miss: LiteralString | None = None, extra: LiteralString | None = None
) -> LiteralString:
    """The claim statement around ``cand``. With ``miss`` (a CASE expression classifying a
    zero-row outcome) it always answers exactly one row: the claim, or the miss (with ``extra``,
    more columns that explain it)."""
    if miss is None:
        final = "SELECT * FROM result ORDER BY ord"
    else:
        more = f", {extra}" if extra else ""
        final = f"SELECT r.*, {miss} AS miss{more} FROM (SELECT 1) one LEFT JOIN result r ON true"
    prior: LiteralString = (
        f"""(SELECT coalesce(json_agg(p ORDER BY p.seq DESC), '[]'::json) FROM (
                SELECT {ATTEMPT_COLUMNS} FROM (
                    SELECT * FROM closed c WHERE c.todo_id = u.id
                    UNION ALL
                    SELECT * FROM todo_attempts pa WHERE pa.todo_id = u.id AND pa.ended_at IS NOT NULL
                ) x
                -- the statement's snapshot still holds the attempts ``pruned`` deletes: leave them out
                WHERE x.seq > u.attempts_total - %(cap)s
                ORDER BY seq DESC LIMIT {compose.integer(PRIOR_ATTEMPTS_LIMIT)}) p)"""
        if with_prior
        else "'[]'::json"
    )
    logged = log_todos(
        "claim",
        "upd",
        before="r.prior_board_state",
        after="'claimed'",
        # the first claim ends the todo's wait; a takeover ends the lapsed attempt
        waited="CASE WHEN r.attempts_total = 1 THEN extract(epoch FROM now() - r.created_at)::double precision END",
        ended="r.prior_state = 'claimed'",
        ran_since=OPEN_ATTEMPT_CLAIMED_AT,  # ``r.claimed_at`` is this claim's, not the lapsed one's
    )
    return f"""
WITH {cand},
keyed AS (
    -- concurrency keys: each keyed candidate needs a slot of its key, except a takeover (the
    -- lapsed holder's slot passes to it)
    SELECT c.id, c.ord, ke.team_id, c.concurrency_key AS key
    FROM cand c JOIN todos kt ON kt.id = c.id JOIN endpoints ke ON ke.id = kt.endpoint_id
    WHERE c.concurrency_key IS NOT NULL AND c.prior_state <> 'claimed'
),
slots AS (
    -- take one slot per key (a statement takes at most one todo of a key): the upsert waits for
    -- the key's row and re-checks the guard on its newest version, so of concurrent claimers only
    -- as many as the limit allows get one. Rows are taken in (team, key) order, so two batch
    -- claims cannot deadlock on each other.
    INSERT INTO concurrency_keys AS k (team_id, key, claimed)
    SELECT DISTINCT ON (team_id, key) team_id, key, 1 FROM keyed ORDER BY team_id, key, ord
    ON CONFLICT (team_id, key) DO UPDATE SET claimed = k.claimed + 1, updated_at = now()
    WHERE k.claimed < k.max_claimed
    RETURNING k.team_id, k.key
),
slotted AS (
    -- the keyed candidate that got its key's slot: the first of its key in claim order
    SELECT DISTINCT ON (kd.team_id, kd.key) kd.id
    FROM keyed kd JOIN slots s ON s.team_id = kd.team_id AND s.key = kd.key
    ORDER BY kd.team_id, kd.key, kd.ord
),
taken AS (
    -- the candidates this claim takes: unkeyed ones, takeovers, and keyed ones that got a slot
    SELECT c.id, c.prior_state, c.ord,
           CASE WHEN c.prior_state = 'failed' THEN 'retry'
                WHEN c.prior_state = 'pending' AND c.prior_not_before IS NOT NULL THEN 'scheduled'
                ELSE c.prior_state END AS prior_board_state
    FROM cand c
    WHERE c.id NOT IN (SELECT kc.id FROM keyed kc) OR c.id IN (SELECT sd.id FROM slotted sd)
),
closed AS (
    -- takeover of a lapsed lease: the dead holder's attempt ends lease_expired / requeued
    UPDATE todo_attempts a
    SET ended_at = now(), outcome = 'lease_expired', disposition = 'requeued'
    FROM taken c
    WHERE a.todo_id = c.id AND c.prior_state = 'claimed' AND a.ended_at IS NULL
    RETURNING a.*
),
upd AS (
    UPDATE todos t SET
        state = 'claimed',
        owner = %(owner)s,
        lease_expires_at = now() + make_interval(secs => %(ttl)s),
        attempt = t.attempt + 1,
        attempts_total = t.attempts_total + 1,
        attempts_pruned = t.attempts_pruned + CASE
            WHEN t.attempts_total + 1 > %(cap)s THEN (
                SELECT count(*) FROM todo_attempts pa
                WHERE pa.todo_id = t.id AND pa.ended_at IS NOT NULL
                  AND pa.seq <= t.attempts_total + 1 - %(cap)s)
            ELSE 0 END,
        claimed_at = now(),
        next_retry_at = NULL,
        updated_at = now()
    FROM taken c
    WHERE t.id = c.id
    RETURNING t.*, c.prior_state, c.prior_board_state, c.ord
),
pruned AS (
    -- the attempt cap: keep the newest %(cap)s attempts (the same predicate as the count above)
    DELETE FROM todo_attempts a USING upd u
    WHERE a.todo_id = u.id AND u.attempts_total > %(cap)s
      AND a.ended_at IS NOT NULL AND a.seq <= u.attempts_total - %(cap)s
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
    SELECT {TODO_COLUMNS}, u.prior_state, u.ord, {prior} AS prior_attempts,
           (SELECT count(*) FROM opened) AS opened
    FROM upd u
)
{final}"""


def claims_from_rows(rows: list[dict], tokens: list[str | None]) -> list[Claim]:
    claims = []
    for row in rows:
        todo = Todo.from_row(row)
        claims.append(
            Claim(
                todo=todo,
                attempt_seq=todo.attempts_total,
                attempts_total=todo.attempts_total,
                lease_token=tokens[row["ord"] - 1] if tokens else None,
                prior_attempts=tuple(Attempt.from_row(a) for a in row["prior_attempts"]),
                took_over=row["prior_state"] == "claimed",
            )
        )
    return claims

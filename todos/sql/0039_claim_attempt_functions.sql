-- What a claim does with a todo's earlier attempts, as functions the claim calls only for a todo
-- that has them: `todo_prior_attempts` answers the newest ones ended, and `todo_prune_attempts`
-- deletes the ones past the attempt cap (docs/lifecycle.md, "Attempts and their retention").
--
-- Written as parts of the claim, both were set up by PostgreSQL's executor at the start of every
-- claim: the answer's aggregate over a sorted union of the attempts and the attempt this claim
-- closes, the count in the UPDATE and the DELETE beside it. A todo's first claim needs neither,
-- and a claim past the cap is rare; together they were about a sixth of a first claim's backend
-- CPU. As calls, the claim's plan holds two function calls made only when there is something to
-- read or delete (attempts_total > 1; attempts_total over the cap).
--
-- `todo_prior_attempts(todo, above_seq, newest, closing)`: as JSON, newest first, at most `newest`
-- of the todo's ended attempts with seq above `above_seq`, and `closing` (the attempt the calling
-- claim ends, as JSON, for a takeover; NULL otherwise: the caller's snapshot still shows it open).
-- STABLE, so it reads with the claim's snapshot: the attempts `todo_prune_attempts` deletes are
-- still there, and `above_seq` leaves them out. Its columns are the store's attempt columns
-- (`todos/core/store/records.py`, ATTEMPT_COLUMNS; a test compares them).
--
-- `todo_prune_attempts(todo, upto_seq)`: deletes the todo's ended attempts with seq up to
-- `upto_seq` and returns how many (the claim adds them to `attempts_pruned`). VOLATILE: called
-- from the claim's UPDATE of a row the claim has already locked, so it runs once per claimed todo.
-- With the cap at 5 or more (BOARD_ATTEMPTS_CAP's minimum), the attempt a takeover closes is
-- never in its range.

CREATE OR REPLACE FUNCTION todo_prior_attempts(todo text, above_seq integer, newest integer, closing json)
    RETURNS json LANGUAGE sql STABLE AS $$
SELECT coalesce(json_agg(p ORDER BY p.seq DESC), '[]'::json)
FROM (
    SELECT seq, attempt, claimer_kind, claimant, owner, claimed_at, last_heartbeat_at,
           lease_expires_at, ended_at, outcome, disposition,
           summary, summary_truncated, artifact, ended_by, error, traceparent
    FROM (
        SELECT * FROM json_populate_record(NULL::todo_attempts, closing) WHERE closing IS NOT NULL
        UNION ALL
        SELECT * FROM todo_attempts a WHERE a.todo_id = todo AND a.ended_at IS NOT NULL
    ) x
    WHERE x.seq > above_seq
    ORDER BY x.seq DESC
    LIMIT newest
) p
$$;

CREATE OR REPLACE FUNCTION todo_prune_attempts(todo text, upto_seq integer) RETURNS integer
    LANGUAGE sql VOLATILE AS $$
WITH gone AS (
    DELETE FROM todo_attempts a
    WHERE a.todo_id = todo AND a.ended_at IS NOT NULL AND a.seq <= upto_seq
    RETURNING 1
)
SELECT count(*)::integer FROM gone
$$;

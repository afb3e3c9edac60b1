-- Run later and concurrency keys.
--
-- Run later. `next_retry_at` becomes the todo's one "not before" time: a retry window on a failed
-- todo (as before) and a schedule on a pending one (docs/lifecycle.md, "Run later": one nullable
-- timestamp and one predicate in the claim serve both). A pending todo with the time set is
-- *scheduled*; the requeue loop clears the time once it is due (scheduled → pending, waiting
-- agents woken), and until then a claim finds a due one through the same index and the same
-- `next_retry_at <= now()` as a due retry. The fresh-work claim index leaves scheduled todos out,
-- so a claim over unscheduled work walks exactly the index it walked before.
ALTER TABLE todos DROP CONSTRAINT todos_check1;  -- was: next_retry_at IS NULL OR state = 'failed'
ALTER TABLE todos ADD CONSTRAINT todos_not_before_state
    CHECK (next_retry_at IS NULL OR state IN ('pending', 'failed'));

DROP INDEX todos_pending;
CREATE INDEX todos_pending ON todos (endpoint_id, queue, priority, created_at)
    WHERE state = 'pending' AND next_retry_at IS NULL;
-- Due times: retry windows and schedules alike (the requeue loop, the claim's recoverable scan,
-- the Board's Retry and Scheduled tabs). Dead letters (failed, no time) stay out.
DROP INDEX todos_retry_due;
CREATE INDEX todos_retry_due ON todos (next_retry_at) WHERE next_retry_at IS NOT NULL;

-- The Board's states gain `scheduled` (pending with a time not yet cleared by the requeue loop).
CREATE OR REPLACE FUNCTION todo_board_state(state text, next_retry_at timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN state = 'pending' AND next_retry_at IS NOT NULL THEN 'scheduled'
                WHEN state <> 'failed' THEN state
                WHEN next_retry_at IS NULL THEN 'dead'
                ELSE 'retry' END
$$;
ALTER TABLE todo_counts DROP CONSTRAINT todo_counts_state_check;
ALTER TABLE todo_counts ADD CONSTRAINT todo_counts_state_check
    CHECK (state IN ('pending', 'scheduled', 'claimed', 'retry', 'dead', 'done', 'canceled'));

-- Concurrency keys. A todo may carry one; at most `max_claimed` todos of a team with the same key
-- are `claimed` at once. The row per (team, key) is both the limit and the counter, and it is the
-- lock the claims serialize on: a claim takes a slot with INSERT … ON CONFLICT DO UPDATE … WHERE
-- claimed < max_claimed, which waits for the row and re-checks the guard on its newest version, so
-- concurrent claimers can never both take the last slot. Every way a claimed todo stops being
-- claimed (complete, fail, release, reap, cancel, revoke, an operator's action, a delete) gives
-- the slot back through the trigger below, written once here rather than in each of those
-- statements; its WHEN clause keeps unkeyed todos off it entirely (no function call).
ALTER TABLE todos ADD COLUMN concurrency_key text
    CHECK (char_length(concurrency_key) BETWEEN 1 AND 200);
CREATE INDEX todos_concurrency_key ON todos (concurrency_key, state) WHERE concurrency_key IS NOT NULL;

CREATE TABLE concurrency_keys (
    team_id      uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    key          text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 200),
    max_claimed  integer     NOT NULL DEFAULT 1 CHECK (max_claimed BETWEEN 1 AND 10000),
    claimed      integer     NOT NULL DEFAULT 0 CHECK (claimed >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, key)
);

-- It sends no notification (docs/lifecycle.md, "Live notifications": no transition takes the
-- notify lock): work of the key that was waiting is taken by the next claim, and a long poll
-- re-checks every RECHECK_SECONDS (todos/agents/api/longpoll.py).
CREATE FUNCTION todos_free_concurrency_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE concurrency_keys k SET claimed = greatest(k.claimed - 1, 0)
    FROM endpoints e
    WHERE e.id = OLD.endpoint_id AND k.team_id = e.team_id AND k.key = OLD.concurrency_key;
    RETURN NULL;
END
$$;
CREATE TRIGGER todos_concurrency_slot_freed AFTER UPDATE OF state ON todos FOR EACH ROW
    WHEN (OLD.state = 'claimed' AND NEW.state <> 'claimed' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION todos_free_concurrency_slot();
CREATE TRIGGER todos_concurrency_slot_deleted AFTER DELETE ON todos FOR EACH ROW
    WHEN (OLD.state = 'claimed' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION todos_free_concurrency_slot();

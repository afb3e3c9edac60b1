-- Run-time limits (docs/lifecycle.md, "Run-time limits"): how long one attempt of a todo may run,
-- on the todo itself or as its team's default for a queue, and the outcome of an attempt the
-- background sweep ended for running past it.
--
-- The limit is a domain, as 0018 made every one-column rule: its check runs only where a value is
-- stored (a create), never on the claims, heartbeats and completions that write other columns of
-- the row. The column is added with the domain still rule-free (a catalog change only: no rewrite,
-- no scan), and the rule is added to the domain afterwards, which reads the rows once to validate
-- them (all NULL) and writes nothing. Locks: ACCESS EXCLUSIVE on todos for the catalog change, then
-- the validation's scan under SHARE (docs/deployment.md, "Upgrading").

CREATE DOMAIN run_time_limit AS integer;

ALTER TABLE todos ADD COLUMN IF NOT EXISTS timeout_seconds run_time_limit;

ALTER DOMAIN run_time_limit ADD CONSTRAINT run_time_limit_range CHECK (VALUE BETWEEN 1 AND 604800);

-- A team's settings for one of its queues: the run-time limit its todos get when they name none.
-- A small table (a row per team and queue that has a setting), read by the sweep by its key.
CREATE TABLE IF NOT EXISTS queue_settings (
    team_id          uuid           NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    queue            text           NOT NULL CHECK (char_length(queue) BETWEEN 1 AND 128),
    timeout_seconds  run_time_limit NOT NULL,
    updated_at       timestamptz    NOT NULL DEFAULT now(),
    updated_by       integer        REFERENCES auth_user(id) ON DELETE SET NULL,
    PRIMARY KEY (team_id, queue)
);

-- The outcome of an attempt the sweep ended for running past its limit while its holder was
-- still heartbeating. The rule is replaced the way 0018 set it: the domain's columns are scanned
-- once to validate, nothing is rewritten.
ALTER DOMAIN attempt_outcome DROP CONSTRAINT attempt_outcome_known;
ALTER DOMAIN attempt_outcome ADD CONSTRAINT attempt_outcome_known
    CHECK (VALUE IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'canceled', 'revoked',
                     'timed_out'));

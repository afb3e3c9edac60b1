-- The change log and the exact counts it keeps (docs/lifecycle.md, "Live notifications").
--
-- A NOTIFY inside a transaction takes PostgreSQL's one cluster-wide notify lock at commit and
-- holds it through the WAL flush, so notifying transitions commit one at a time. Instead, every
-- state-changing statement INSERTs its change here, in the same statement (a rollback records
-- nothing, a commit never loses it), and one relay per installation (todos/live/relay.py) turns the
-- rows into NOTIFYs on board_events and into the counts below, then deletes them, in one
-- transaction.

-- The Board's state of a todo: the store's state, with `failed` split as docs/lifecycle.md
-- derives it ("Derived states": a retry window open → `retry`, none → `dead`). The counts and
-- the log speak in these terms.
CREATE FUNCTION todo_board_state(state text, next_retry_at timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN state <> 'failed' THEN state
                WHEN next_retry_at IS NULL THEN 'dead'
                ELSE 'retry' END
$$;

CREATE TABLE change_log (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT clock_timestamp(),  -- when written (≈ its commit)
    team_id       uuid        NOT NULL,   -- no FK: a row outlives a deleted team until relayed
    endpoint_id   uuid,
    todo_id       text,                   -- NULL: a change to the endpoint, queue or team itself
    queue         text,
    op            text        NOT NULL CHECK (op ~ '^[a-z_]{1,32}$'),
    state_before  text,                   -- todo_board_state(); NULL: the todo did not exist
    state_after   text,                   -- NULL: the todo no longer exists
    user_id       integer                 -- a membership change: whose
) WITH (fillfactor = 100, autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 5000);
-- The relay deletes every row it reads, so the table stays small; frequent vacuums keep its few
-- pages reused (thresholds in rows, not a share of a table that is nearly always empty).

-- Exact per-(endpoint, queue, Board state) counts, as of the relay's last pass: the overview and
-- the todo list's state tabs read these instead of counting todos. Rows of a deleted endpoint go
-- with it (its todos cascade away without log rows).
CREATE TABLE todo_counts (
    endpoint_id  uuid   NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    queue        text   NOT NULL,
    state        text   NOT NULL CHECK (state IN ('pending', 'claimed', 'retry', 'dead', 'done', 'canceled')),
    n            bigint NOT NULL,
    PRIMARY KEY (endpoint_id, queue, state)
);

-- Finished work per minute, for "done / dead-lettered in the last hour" and the sparkline without
-- a scan of todos: the relay adds the log rows whose state_after is `done` or `dead`.
CREATE TABLE todo_finished_minutes (
    endpoint_id  uuid        NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    queue        text        NOT NULL,
    minute       timestamptz NOT NULL,
    done         integer     NOT NULL DEFAULT 0,
    dead         integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (endpoint_id, queue, minute)
);
CREATE INDEX todo_finished_minutes_minute ON todo_finished_minutes (minute);

-- The relay's own state, one row. counts_stale: log rows were dropped without being applied (the
-- log was capped while no relay ran) or a count went negative, so the next relay pass rebuilds the
-- counts from todos. alive_at: the holder's last proof of life (at most every few seconds).
CREATE TABLE relay_state (
    id            boolean     PRIMARY KEY DEFAULT true CHECK (id),
    counts_stale  boolean     NOT NULL DEFAULT false,
    holder        text,
    elected_at    timestamptz,
    alive_at      timestamptz,
    rebuilt_at    timestamptz
);
INSERT INTO relay_state (id) VALUES (true);

-- The counts of the todos that exist now (an installation upgrading with work in its tables).
INSERT INTO todo_counts (endpoint_id, queue, state, n)
SELECT endpoint_id, queue, todo_board_state(state, next_retry_at), count(*)
FROM todos GROUP BY 1, 2, 3;
INSERT INTO todo_finished_minutes (endpoint_id, queue, minute, done, dead)
SELECT endpoint_id, queue, date_trunc('minute', completed_at),
       count(*) FILTER (WHERE state = 'done'),
       count(*) FILTER (WHERE state = 'failed' AND next_retry_at IS NULL)
FROM todos
WHERE completed_at > now() - interval '1 hour' AND todo_board_state(state, next_retry_at) IN ('done', 'dead')
GROUP BY 1, 2, 3;

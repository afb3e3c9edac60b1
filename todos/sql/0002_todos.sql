-- The work items and their attempts. docs/lifecycle.md says what every column here means.

CREATE TABLE todos (
    id               text        PRIMARY KEY,
    endpoint_id      uuid        NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    queue            text        NOT NULL,
    source           text,
    kind             text,
    title            text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 500),
    payload          jsonb,
    idempotency_key  text        CHECK (idempotency_key <> ''),
    assignee         text,
    priority         smallint    NOT NULL DEFAULT 0,
    state            text        NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'claimed', 'done', 'failed', 'canceled')),
    owner            text,
    lease_expires_at timestamptz,
    attempt          integer     NOT NULL DEFAULT 0,
    max_attempts     integer     NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
    attempts_total   integer     NOT NULL DEFAULT 0,
    attempts_pruned  integer     NOT NULL DEFAULT 0,
    next_retry_at    timestamptz,
    result           jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    claimed_at       timestamptz,
    completed_at     timestamptz,
    CHECK ((state = 'claimed') = (owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (next_retry_at IS NULL OR state = 'failed')
) WITH (fillfactor = 80);
-- fillfactor 80 leaves room on each page so a heartbeat's new row version stays on the same page
-- (a HOT update). For the same reason no index below covers lease_expires_at or updated_at: those
-- are the columns a heartbeat writes, and indexing either would turn every heartbeat into index
-- insertions.

-- The claim scan: claimable fresh work per (endpoint, queue) in claim order.
CREATE INDEX todos_pending ON todos (endpoint_id, queue, priority, created_at) WHERE state = 'pending';
-- Leases in flight: the reaper's and the takeover scan's candidates (lease_expires_at is filtered,
-- not indexed). In-flight rows are few: bounded by the number of workers.
CREATE INDEX todos_claimed ON todos (endpoint_id, queue) WHERE state = 'claimed';
-- Retry windows: the requeue loop and the claim scan look for due ones.
CREATE INDEX todos_retry_due ON todos (next_retry_at) WHERE state = 'failed' AND next_retry_at IS NOT NULL;
-- Idempotent enqueue: one live todo per key and endpoint. "Live" = not done, not a dead letter
-- (a failed todo with an open retry window is still live). The same predicate is repeated,
-- exactly, in the store's INSERT … ON CONFLICT.
CREATE UNIQUE INDEX idx_todos_dedupe ON todos (endpoint_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL);
-- The Board's lists: newest/oldest first per endpoint, and per (endpoint, state).
CREATE INDEX todos_endpoint_created ON todos (endpoint_id, created_at, id);
CREATE INDEX todos_endpoint_state_created ON todos (endpoint_id, state, created_at, id);
CREATE INDEX todos_endpoint_queue_state_created ON todos (endpoint_id, queue, state, created_at, id);
-- Terminal todos by completion time: "done in the last hour" and the retention sweep.
CREATE INDEX todos_completed ON todos (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE todo_attempts (
    todo_id             text        NOT NULL REFERENCES todos(id) ON DELETE CASCADE,
    seq                 int         NOT NULL,
    attempt             int         NOT NULL,
    claimer_kind        text        NOT NULL CHECK (claimer_kind IN ('endpoint', 'owner')),
    claimer_endpoint_id uuid        REFERENCES endpoints(id) ON DELETE SET NULL,
    claimer_session     text,
    owner               text        NOT NULL,
    claimant            text        CHECK (octet_length(claimant) <= 128),
    claimed_at          timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at   timestamptz,
    lease_expires_at    timestamptz NOT NULL,
    ended_at            timestamptz,
    outcome             text CHECK (outcome IN ('completed', 'failed', 'released', 'lease_expired',
                                                'reaped', 'canceled', 'revoked')),
    disposition         text CHECK (disposition IN ('done', 'retry_scheduled', 'requeued',
                                                    'dead_lettered', 'canceled')),
    summary             text        CHECK (octet_length(summary) <= 2048),
    summary_truncated   boolean     NOT NULL DEFAULT false,
    artifact            text        CHECK (octet_length(artifact) <= 512),
    lease_token_hash    bytea       CHECK (octet_length(lease_token_hash) = 32),
    PRIMARY KEY (todo_id, seq),
    CHECK ((ended_at IS NULL) = (outcome IS NULL)),
    CHECK ((ended_at IS NULL) = (disposition IS NULL))
) WITH (fillfactor = 80);

-- At most one open attempt per todo, checked at COMMIT. A plain unique partial index would be
-- checked row by row, and the order in which a statement's data-modifying CTEs run is
-- unspecified, so a takeover's INSERT of the new attempt could be checked before the UPDATE that
-- closes the old one. A deferred exclusion constraint sees only the committed result.
ALTER TABLE todo_attempts ADD CONSTRAINT todo_attempts_one_open
    EXCLUDE USING btree (todo_id WITH =) WHERE (ended_at IS NULL)
    DEFERRABLE INITIALLY DEFERRED;

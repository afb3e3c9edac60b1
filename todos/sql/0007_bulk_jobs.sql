-- Bulk jobs: a retry or cancel over many todos, worked in chunks by the background loops of any
-- Board process, readable from every process, surviving the restart of all of them.
--
-- A job is created `queued` with its source (the selected ids, or the filter, or a dead-letter
-- group). A worker then fixes its set of ids once ("materializes" it) into bulk_job_chunks rows of
-- at most 500 ids and moves the job to `running`; from then on the preview's count is the count
-- that is worked, whatever happens to the filter's matches. Each chunk is worked in one
-- transaction that holds the chunk's row lock (FOR UPDATE SKIP LOCKED): the store's retry_many /
-- cancel_many over its ids, then `done_at` on the chunk and the job's counters. A worker that dies
-- mid-chunk loses its connection, PostgreSQL rolls the whole chunk back and releases the lock, and
-- the next worker takes the chunk: no todo is changed twice, none is forgotten.

CREATE TABLE bulk_jobs (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        integer     NOT NULL REFERENCES auth_user(id) ON DELETE CASCADE,
    username       text        NOT NULL,               -- the acting name in the audit rows
    action         text        NOT NULL CHECK (action IN ('retry', 'cancel')),
    scope          text        NOT NULL CHECK (scope IN ('selected', 'matching', 'group')),
    filter         jsonb       NOT NULL DEFAULT '{}',  -- the Board filter's params (querystring keys)
    group_reason   text        CHECK (char_length(group_reason) <= 300),
    selected_ids   text[]      CHECK (cardinality(selected_ids) <= 1000),
    team_ids       uuid[]      NOT NULL,               -- the teams it may touch (re-checked per chunk by the store)
    description    text        NOT NULL CHECK (char_length(description) <= 1000),
    note           text        CHECK (char_length(note) <= 2000),
    state          text        NOT NULL DEFAULT 'queued'
                               CHECK (state IN ('queued', 'running', 'done', 'failed', 'canceled')),
    total          integer     NOT NULL DEFAULT 0,     -- ids materialized (the planned count)
    processed      integer     NOT NULL DEFAULT 0,     -- ids in chunks done
    changed        integer     NOT NULL DEFAULT 0,
    skipped        integer     NOT NULL DEFAULT 0,     -- the store's guard refused them: their state moved
    truncated      boolean     NOT NULL DEFAULT false, -- more matched than a job covers
    skipped_sample jsonb       NOT NULL DEFAULT '[]',  -- [{"id", "state"}], at most 20: the report's examples
    error          text,
    worker         text,                               -- the process that last worked it (host:pid)
    heartbeat_at   timestamptz,                        -- when it last did
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    finished_at    timestamptz,
    CHECK (processed <= total AND changed + skipped = processed)
);
CREATE INDEX bulk_jobs_active ON bulk_jobs (created_at) WHERE state IN ('queued', 'running');
CREATE INDEX bulk_jobs_finished ON bulk_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX bulk_jobs_user ON bulk_jobs (user_id, created_at DESC);

CREATE TABLE bulk_job_chunks (
    job_id   uuid        NOT NULL REFERENCES bulk_jobs(id) ON DELETE CASCADE,
    seq      integer     NOT NULL,
    todo_ids text[]      NOT NULL CHECK (cardinality(todo_ids) BETWEEN 1 AND 1000),
    done_at  timestamptz,
    worker   text,
    changed  integer,
    skipped  integer,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX bulk_job_chunks_open ON bulk_job_chunks (job_id, seq) WHERE done_at IS NULL;

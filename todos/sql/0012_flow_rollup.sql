-- The flow of work over time, for the charts: per team, queue and minute (and hour),
-- how many attempts completed, failed or died, and how long todos waited for their first claim and
-- attempts ran, as histograms over fixed buckets (p50 and p95 come from the bucket counts). The
-- relay keeps it from the change log (todos/live/relay.py), as it keeps todo_counts, so a chart
-- reads O(intervals) rows whatever the number of todos.

-- What a change did to the time a todo spent, in seconds, written by the statement itself
-- (todos/core/store/fragments.py, log_todos): waited — a todo's first claim, created → claimed;
-- ran — an attempt that ended (completed, failed, released, lapsed, canceled, revoked), claimed → end.
ALTER TABLE change_log ADD COLUMN waited double precision, ADD COLUMN ran double precision;

-- The histogram's buckets: six per decade, bucket b holding [10^((b-13)/6), 10^((b-12)/6)) seconds
-- (bucket 1 also everything under 10 ms, bucket 50 everything from about 17 days on). The Board
-- mirrors this (todos/core/selectors/flow.py, bucket_bounds): change both or neither.
CREATE FUNCTION flow_bucket(seconds double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN seconds < 0.01 THEN 1
                ELSE least(50, greatest(1, floor(6 * log(seconds))::integer + 13)) END
$$;

-- The histogram of a set of bucket numbers: 50 counts, bucket 1 first.
CREATE FUNCTION flow_histogram(buckets integer[]) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(coalesce(c.n, 0) ORDER BY b.b)
    FROM generate_series(1, 50) b(b)
    LEFT JOIN (SELECT x, count(*)::integer AS n FROM unnest(buckets) x GROUP BY x) c ON c.x = b.b
$$;

-- Two histograms added bucket by bucket (the relay's upsert).
CREATE FUNCTION flow_add(a integer[], b integer[]) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i) FROM unnest(a, b) WITH ORDINALITY u(x, y, i)
$$;

-- One row per (team, grain, queue, interval start). queue '' is every queue of the team (queue
-- names are never empty), so "all queues" reads as few rows as one queue. grain 'minute' rows are
-- kept a day (the 1-hour chart), 'hour' rows eight days (the 24-hour and 7-day charts): the table's
-- size is minutes × queues, not todos. failed: attempts that failed plus todos dead-lettered any
-- other way; died: attempts whose lease lapsed (reaped, or taken over by a claim).
CREATE TABLE todo_flow (
    team_id    uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    grain      text        NOT NULL CHECK (grain IN ('minute', 'hour')),
    queue      text        NOT NULL,
    at         timestamptz NOT NULL,
    completed  integer     NOT NULL DEFAULT 0,
    failed     integer     NOT NULL DEFAULT 0,
    died       integer     NOT NULL DEFAULT 0,
    waited     integer[]   NOT NULL CHECK (cardinality(waited) = 50),
    ran        integer[]   NOT NULL CHECK (cardinality(ran) = 50),
    PRIMARY KEY (team_id, grain, queue, at)
);
CREATE INDEX todo_flow_at ON todo_flow (grain, at);

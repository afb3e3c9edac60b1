-- Periodic schedules.
--
-- A schedule belongs to a team and fires todos for one of the team's endpoints (the owner) on one
-- of its queues, on the ticks of a cron expression read in an IANA time zone. The expression and
-- the zone are checked (and the ticks computed) by cronsim in Python; the database keeps
-- `next_fire_at`, the next tick not yet fired, which is all the loop needs to find due schedules.
--
-- Exactly once: the loop takes due schedules with FOR UPDATE SKIP LOCKED, and in the same
-- transaction inserts one `schedule_fires` row per tick it fires (primary key: schedule, tick),
-- creates the todo (idempotency key `schedule:<id>:<tick>`), and moves `next_fire_at` past the
-- ticks it handled. A process that dies before COMMIT leaves nothing (the next one fires the same
-- tick); one that committed has moved `next_fire_at`, and the primary key refuses a second fire
-- of the same tick whatever happens.
CREATE TABLE schedules (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id        uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name           text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    cron           text        NOT NULL CHECK (char_length(cron) BETWEEN 1 AND 200),
    timezone       text        NOT NULL CHECK (char_length(timezone) BETWEEN 1 AND 64),
    endpoint_id    uuid        NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    queue          text        NOT NULL,
    title          text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 500),
    kind           text,
    payload        jsonb,
    priority       smallint    NOT NULL DEFAULT 0,
    max_attempts   integer     NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
    -- skip: ticks missed by more than the grace are not fired; catch_up: one todo fires for them
    missed         text        NOT NULL DEFAULT 'skip' CHECK (missed IN ('skip', 'catch_up')),
    paused         boolean     NOT NULL DEFAULT false,
    next_fire_at   timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, name)
);
-- The loop's scan: due, running schedules in tick order.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE NOT paused;
CREATE INDEX schedules_endpoint ON schedules (endpoint_id);

-- One row per fired tick: the proof a tick fired (once) and the link to its todo. `how` says why
-- it fired: on its tick, to catch up missed ticks (`missed` counts them), or by a person.
CREATE TABLE schedule_fires (
    schedule_id  uuid        NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    tick         timestamptz NOT NULL,
    -- no FK: the record outlives retention's purge of the todo (the Board then says "gone"), and a
    -- todo INSERT skipped by the idempotency key's conflict leaves the fire recorded, not failed
    todo_id      text,
    how          text        NOT NULL CHECK (how IN ('tick', 'catch_up', 'manual')),
    missed       integer     NOT NULL DEFAULT 0 CHECK (missed >= 0),
    fired_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (schedule_id, tick)
);
CREATE INDEX schedule_fires_recent ON schedule_fires (schedule_id, fired_at DESC);
CREATE INDEX schedule_fires_todo ON schedule_fires (todo_id) WHERE todo_id IS NOT NULL;

-- An endpoint's claims can be paused by a team admin (the Board's Agents page): while
-- claims_paused_at is set, every claim by the endpoint is refused ``paused``; its reports
-- (heartbeat, complete, fail, release) still land. claims_paused_by is the person who paused it,
-- named in the refusal so the agent's operator knows whom to ask.
--
-- Both columns are nullable with no default: ADD COLUMN is a catalog change only (no rewrite),
-- under a brief ACCESS EXCLUSIVE lock on endpoints.
ALTER TABLE endpoints ADD COLUMN IF NOT EXISTS claims_paused_at timestamptz;
ALTER TABLE endpoints ADD COLUMN IF NOT EXISTS claims_paused_by text;

-- Running totals of the charts' rollup for /metrics: per team and queue, every attempt completed,
-- failed and died, and the histograms of waiting and running times, since the installation began.
-- Prometheus wants counters that only grow; todo_flow's rows are windows the relay deletes after
-- eight days, so a sum over them would fall. The relay's one upsert into todo_flow
-- (todos/live/relay.py, flow_upsert) is additive, so what each upsert adds to a queue's hourly
-- row is exactly what the totals gain: a trigger adds that difference here, in the same statement.
-- The every-queue rows (queue '') and the minute rows would count the same work again: skipped.
-- The relay's retention DELETE does not fire it (INSERT and UPDATE only).
CREATE TABLE IF NOT EXISTS todo_flow_totals (
    team_id    uuid      NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    queue      text      NOT NULL,
    completed  bigint    NOT NULL DEFAULT 0,
    failed     bigint    NOT NULL DEFAULT 0,
    died       bigint    NOT NULL DEFAULT 0,
    waited     integer[] NOT NULL CHECK (cardinality(waited) = 50),
    ran        integer[] NOT NULL CHECK (cardinality(ran) = 50),
    PRIMARY KEY (team_id, queue)
);

CREATE OR REPLACE FUNCTION todo_flow_totals_add() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    zero integer[] := array_fill(0, ARRAY[50]);
    before_waited integer[] := zero;
    before_ran integer[] := zero;
    before_completed integer := 0;
    before_failed integer := 0;
    before_died integer := 0;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        before_waited := OLD.waited;
        before_ran := OLD.ran;
        before_completed := OLD.completed;
        before_failed := OLD.failed;
        before_died := OLD.died;
    END IF;
    INSERT INTO todo_flow_totals AS t (team_id, queue, completed, failed, died, waited, ran)
    VALUES (NEW.team_id, NEW.queue, NEW.completed - before_completed, NEW.failed - before_failed,
            NEW.died - before_died,
            flow_add(NEW.waited, (SELECT array_agg(-x ORDER BY i) FROM unnest(before_waited) WITH ORDINALITY u(x, i))),
            flow_add(NEW.ran, (SELECT array_agg(-x ORDER BY i) FROM unnest(before_ran) WITH ORDINALITY u(x, i))))
    ON CONFLICT (team_id, queue) DO UPDATE SET
        completed = t.completed + EXCLUDED.completed, failed = t.failed + EXCLUDED.failed,
        died = t.died + EXCLUDED.died,
        waited = flow_add(t.waited, EXCLUDED.waited), ran = flow_add(t.ran, EXCLUDED.ran);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS todo_flow_totals_add ON todo_flow;
CREATE TRIGGER todo_flow_totals_add AFTER INSERT OR UPDATE ON todo_flow
    FOR EACH ROW WHEN (NEW.grain = 'hour' AND NEW.queue <> '')
    EXECUTE FUNCTION todo_flow_totals_add();

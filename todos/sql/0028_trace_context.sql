-- Trace context (docs/telemetry.md): the W3C traceparent a producer created a todo under, and on
-- each attempt the traceparent of the worker that settled it. The store checks both before they
-- are written (lower-case hex, W3C's layout); the CHECKs only bound what may land here.
-- Nullable columns without a default: adding them rewrites nothing. The CHECKs are added NOT VALID
-- (every existing value is NULL): no scan of either table, a moment's lock on each.

ALTER TABLE todos ADD COLUMN IF NOT EXISTS traceparent text;
ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS traceparent text;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'todos_traceparent_length') THEN
        ALTER TABLE todos ADD CONSTRAINT todos_traceparent_length
            CHECK (traceparent IS NULL OR char_length(traceparent) = 55) NOT VALID;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'todo_attempts_traceparent_length') THEN
        ALTER TABLE todo_attempts ADD CONSTRAINT todo_attempts_traceparent_length
            CHECK (traceparent IS NULL OR char_length(traceparent) = 55) NOT VALID;
    END IF;
END
$$;

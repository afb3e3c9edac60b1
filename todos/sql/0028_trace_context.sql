-- Trace context (docs/telemetry.md): the W3C traceparent a producer created a todo under, and on
-- each attempt the traceparent of the worker that settled it. The store checks both before they
-- are written (lower-case hex, W3C's layout); the domain's rule only bounds what may land here.
-- A column's own rule is its domain (0018): the columns are added while `trace_context` has no
-- rule (nullable, no default: a catalog change, no rewrite), then the rule is added to the domain
-- NOT VALID (every existing value is NULL): no scan of either table, a moment's lock on each.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'trace_context') THEN
        CREATE DOMAIN trace_context AS text;
    END IF;
END
$$;

ALTER TABLE todos ADD COLUMN IF NOT EXISTS traceparent trace_context;
ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS traceparent trace_context;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'trace_context_length') THEN
        ALTER DOMAIN trace_context ADD CONSTRAINT trace_context_length
            CHECK (char_length(VALUE) = 55) NOT VALID;
    END IF;
END
$$;

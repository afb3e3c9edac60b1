-- Trace context (docs/telemetry.md): the W3C traceparent a producer created a todo under, and on
-- each attempt the traceparent of the worker that settled it. Both are checked by the store before
-- they are written (lower-case hex, version 00 layout); the CHECKs only bound what may land here.
-- Nullable columns without a default: adding them rewrites nothing and holds the tables' ACCESS
-- EXCLUSIVE lock only for the catalog update.

ALTER TABLE todos ADD COLUMN IF NOT EXISTS traceparent text
    CHECK (traceparent IS NULL OR char_length(traceparent) = 55);
ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS traceparent text
    CHECK (traceparent IS NULL OR char_length(traceparent) = 55);

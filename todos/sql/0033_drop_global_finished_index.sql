-- One finished-time index, not two: `todos_completed (completed_at)` goes.
--
-- Every completion is a non-HOT update, so each index a finished todo belongs to gains an entry
-- (and its WAL) at the completion. Since 0029 a finished todo entered both `todos_completed` and
-- `todos_endpoint_finished (endpoint_id, completed_at, id)`. The readers of the global one (the
-- retention sweep, /metrics' "finished in the last hour") now walk the per-endpoint one, one
-- endpoint at a time; the relay's full recount reads the table as it already does for the counts.
DROP INDEX IF EXISTS todos_completed;

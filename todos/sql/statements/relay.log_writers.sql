-- relay.log_writers
-- the constant todos.live.relay.LOG_WRITERS_SQL
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT coalesce(array_agg(DISTINCT virtualtransaction), '{}') AS writers
FROM pg_locks
WHERE locktype = 'relation' AND relation = 'change_log'::regclass AND mode = 'RowExclusiveLock'
  AND pid IS DISTINCT FROM pg_backend_pid()

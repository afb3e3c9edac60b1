-- relay.still_writing
-- the constant todos.live.relay.STILL_WRITING_SQL
-- bound where it runs:
--   %(writers)s = ['3/1234']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS n,
       (SELECT pg_sequence_last_value(pg_get_serial_sequence('change_log', 'id')::regclass)) AS last_id
FROM pg_locks
WHERE locktype = 'relation' AND relation = 'change_log'::regclass AND mode = 'RowExclusiveLock'
  AND virtualtransaction = ANY(%(writers)s::text[])

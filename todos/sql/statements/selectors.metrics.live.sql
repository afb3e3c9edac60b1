-- selectors.metrics.live
-- the constant todos.core.selectors.metrics.SQL['live']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'pending')::bigint AS pending,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'claimed')::bigint AS claimed,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'retry')::bigint AS retry_scheduled,
       (SELECT coalesce(sum(n), 0) FROM todo_counts WHERE state = 'dead')::bigint AS dead_letter,
       (SELECT count(*) FROM todos WHERE state = 'claimed' AND lease_expires_at < now()) AS lease_lapsed,
       (SELECT count(*) FROM todos WHERE state = 'failed' AND next_retry_at <= now()) AS retry_due,
       (SELECT count(*) FROM change_log) AS change_log_rows,
       (SELECT extract(epoch FROM now() - alive_at) FROM relay_state) AS relay_alive_age,
       (SELECT counts_stale FROM relay_state) AS counts_stale,
       (SELECT count(*) FROM queue_pauses) AS queue_pauses,
       (SELECT reltuples::bigint FROM pg_class WHERE oid = 'todos'::regclass) AS rows_estimate

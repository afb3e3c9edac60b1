-- relay.rebuild
-- the constant todos.live.relay.REBUILD_STATEMENTS
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH taken AS (DELETE FROM change_log RETURNING *) SELECT (SELECT count(pg_notify('board_events', json_strip_nulls(json_build_object(
            'op', g.op, 'team', g.team_id, 'ids', g.ids, 'queues', g.queues,
            'endpoints', g.endpoints, 'user', g.user_id))::text))
        FROM (SELECT team_id, op, user_id,
                     coalesce(array_agg(DISTINCT todo_id) FILTER (WHERE todo_id IS NOT NULL), '{}') AS ids,
                     coalesce(array_agg(DISTINCT queue) FILTER (WHERE queue IS NOT NULL), '{}') AS queues,
                     coalesce(array_agg(DISTINCT endpoint_id) FILTER (WHERE endpoint_id IS NOT NULL), '{}')
                       AS endpoints
              FROM (SELECT *, (dense_rank() OVER (PARTITION BY team_id, op, user_id ORDER BY todo_id) - 1)
                              / 25 AS chunk
                    FROM taken) x
              GROUP BY team_id, op, user_id, chunk) g) AS sent;

DELETE FROM todo_counts;

INSERT INTO todo_counts (endpoint_id, queue, state, n)
       SELECT endpoint_id, queue, todo_board_state(state, next_retry_at), count(*) FROM todos GROUP BY 1, 2, 3;

DELETE FROM todo_finished_minutes WHERE minute > now() - interval '1 hour';

INSERT INTO todo_finished_minutes (endpoint_id, queue, minute, done, dead)
       SELECT endpoint_id, queue, date_trunc('minute', completed_at),
              count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'failed')
       FROM todos
       WHERE completed_at > now() - interval '1 hour' AND todo_board_state(state, next_retry_at) IN ('done', 'dead')
       GROUP BY 1, 2, 3;

UPDATE relay_state SET counts_stale = false, rebuilt_at = now();

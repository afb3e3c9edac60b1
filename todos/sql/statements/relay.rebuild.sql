-- relay.rebuild
-- the constant todos.live.relay.REBUILD_STATEMENTS
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH taken AS (DELETE FROM change_log RETURNING *),
        flowed AS (INSERT INTO todo_flow AS f (team_id, grain, queue, at, completed, failed, died, waited, ran)
    SELECT s.team_id, g.grain, q.queue, date_trunc(g.grain, s.at),
           count(*) FILTER (WHERE s.completed)::integer, count(*) FILTER (WHERE s.failed)::integer,
           count(*) FILTER (WHERE s.died)::integer,
           flow_histogram(array_agg(flow_bucket(s.waited)) FILTER (WHERE s.waited IS NOT NULL)),
           flow_histogram(array_agg(flow_bucket(s.ran)) FILTER (WHERE s.ran IS NOT NULL))
    FROM (SELECT fs.team_id, fs.queue, fs.at, fs.waited, fs.ran,
                 fs.state_after = 'done' AND fs.state_before IS DISTINCT FROM 'done' AS completed,
                 fs.op IN ('fail', 'timeout')
                   OR (fs.state_after = 'dead' AND fs.state_before IS DISTINCT FROM 'dead') AS failed,
                 fs.op = 'reap'
                   OR (fs.op = 'claim' AND fs.state_before = 'claimed') AS died
          FROM taken fs
          WHERE fs.todo_id IS NOT NULL AND fs.queue IS NOT NULL
            AND EXISTS (SELECT 1 FROM teams ft WHERE ft.id = fs.team_id)) s
    CROSS JOIN LATERAL (VALUES (s.queue), ('')) q(queue)
    CROSS JOIN (VALUES ('minute'), ('hour')) g(grain)
    WHERE s.completed OR s.failed OR s.died OR s.waited IS NOT NULL OR s.ran IS NOT NULL
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (team_id, grain, queue, at) DO UPDATE SET
        completed = f.completed + EXCLUDED.completed, failed = f.failed + EXCLUDED.failed,
        died = f.died + EXCLUDED.died,
        waited = flow_add(f.waited, EXCLUDED.waited), ran = flow_add(f.ran, EXCLUDED.ran))
        SELECT (SELECT count(pg_notify('board_events', json_strip_nulls(json_build_object(
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

DELETE FROM todo_finished_minutes WHERE minute >= date_trunc('minute', now() - interval '1 hour');

INSERT INTO todo_finished_minutes (endpoint_id, queue, minute, done, dead)
       SELECT endpoint_id, queue, date_trunc('minute', completed_at),
              count(*) FILTER (WHERE state = 'done'),
              count(*) FILTER (WHERE state = 'failed')
       FROM todos
       WHERE completed_at >= date_trunc('minute', now() - interval '1 hour')
         AND todo_board_state(state, next_retry_at) IN ('done', 'dead')
       GROUP BY 1, 2, 3;

UPDATE relay_state SET counts_stale = false, rebuilt_at = now();

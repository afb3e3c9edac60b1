-- relay.pass
-- the constant todos.live.relay.PASS_SQL
-- bound where it runs:
--   %(batch)s = 500
--   %(floor)s = 0
--   %(filenode)s = 16384
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH taken AS (
    DELETE FROM change_log
    -- from the floor, unless the log has new storage (truncated) since it was set: then from the start
    WHERE id IN (SELECT id FROM change_log
                 WHERE id >= CASE WHEN pg_relation_filenode('change_log') = %(filenode)s THEN %(floor)s ELSE 0 END
                 ORDER BY id LIMIT %(batch)s)
    RETURNING *
),
delta AS (
    SELECT t.endpoint_id, t.queue, s.state, sum(s.d) AS d
    FROM taken t CROSS JOIN LATERAL (VALUES (t.state_before, -1), (t.state_after, 1)) AS s(state, d)
    WHERE t.todo_id IS NOT NULL AND s.state IS NOT NULL
      AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = t.endpoint_id)
    GROUP BY 1, 2, 3
    HAVING sum(s.d) <> 0
),
counted AS (
    INSERT INTO todo_counts AS c (endpoint_id, queue, state, n)
    SELECT endpoint_id, queue, state, d FROM delta
    ON CONFLICT (endpoint_id, queue, state) DO UPDATE SET n = c.n + EXCLUDED.n
    RETURNING c.n
),
finished AS (
    INSERT INTO todo_finished_minutes AS f (endpoint_id, queue, minute, done, dead)
    SELECT t.endpoint_id, t.queue, date_trunc('minute', t.at),
           count(*) FILTER (WHERE t.state_after = 'done'), count(*) FILTER (WHERE t.state_after = 'dead')
    FROM taken t
    WHERE t.state_after IN ('done', 'dead') AND t.state_before IS DISTINCT FROM t.state_after
      AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = t.endpoint_id)
    GROUP BY 1, 2, 3
    ON CONFLICT (endpoint_id, queue, minute) DO UPDATE SET done = f.done + EXCLUDED.done, dead = f.dead + EXCLUDED.dead
),
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
        waited = flow_add(f.waited, EXCLUDED.waited), ran = flow_add(f.ran, EXCLUDED.ran)),
state AS (
    UPDATE relay_state SET
        counts_stale = counts_stale OR EXISTS (SELECT 1 FROM counted WHERE n < 0),
        alive_at = now()
    WHERE alive_at IS NULL OR alive_at < now() - interval '5 seconds'
       OR EXISTS (SELECT 1 FROM counted WHERE n < 0)
    RETURNING counts_stale
)
SELECT (SELECT count(*) FROM taken) AS taken, (SELECT max(id) FROM taken) AS high,
       pg_relation_filenode('change_log') AS filenode,
       extract(epoch FROM clock_timestamp() - statement_timestamp()) AS took,
       (SELECT count(pg_notify('board_events', json_strip_nulls(json_build_object(
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
              GROUP BY team_id, op, user_id, chunk) g) AS sent,
       coalesce((SELECT counts_stale FROM state), (SELECT counts_stale FROM relay_state)) AS counts_stale

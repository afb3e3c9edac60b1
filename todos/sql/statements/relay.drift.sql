-- relay.drift
-- the constant todos.live.relay.DRIFT_SQL
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH actual AS (
    SELECT endpoint_id, queue, todo_board_state(state, next_retry_at) AS state, count(*) AS n
    FROM todos GROUP BY 1, 2, 3
), logged AS (
    SELECT c.endpoint_id, c.queue, s.state, sum(s.d) AS n
    FROM change_log c CROSS JOIN LATERAL (VALUES (c.state_before, -1), (c.state_after, 1)) AS s(state, d)
    WHERE c.todo_id IS NOT NULL AND s.state IS NOT NULL
    GROUP BY 1, 2, 3
), counted AS (
    SELECT endpoint_id, queue, state, sum(n) AS n FROM (
        SELECT endpoint_id, queue, state, n FROM todo_counts
        UNION ALL SELECT endpoint_id, queue, state, n FROM logged) k
    GROUP BY 1, 2, 3
)
SELECT coalesce(a.endpoint_id, c.endpoint_id) AS endpoint_id, coalesce(a.queue, c.queue) AS queue,
       coalesce(a.state, c.state) AS state, coalesce(c.n, 0)::bigint AS was, coalesce(a.n, 0)::bigint AS now
FROM actual a FULL JOIN counted c USING (endpoint_id, queue, state)
WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = coalesce(a.endpoint_id, c.endpoint_id))
ORDER BY 1, 2, 3

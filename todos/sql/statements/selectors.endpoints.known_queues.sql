-- selectors.endpoints.known_queues
-- built by todos.core.selectors.endpoints.known_queues(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH RECURSIVE seen AS (
    SELECT e.id AS endpoint_id, (SELECT min(t.queue) FROM todos t WHERE t.endpoint_id = e.id) AS queue, 1 AS n
    FROM endpoints e WHERE e.team_id = %(team_id)s
    UNION ALL
    SELECT s.endpoint_id,
           (SELECT min(t.queue) FROM todos t WHERE t.endpoint_id = s.endpoint_id AND t.queue > s.queue),
           s.n + 1
    FROM seen s WHERE s.queue IS NOT NULL AND s.n < %(max)s
)
SELECT queue FROM seen WHERE queue IS NOT NULL
UNION
SELECT unnest(e.scope_queues) FROM endpoints e WHERE e.team_id = %(team_id)s
ORDER BY 1 LIMIT %(max)s

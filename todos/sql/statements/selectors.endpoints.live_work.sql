-- selectors.endpoints.live_work
-- built by todos.core.selectors.endpoints.live_work(), the statement #1 it runs
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT 'pending' AS state, t.queue, count(*) AS n FROM todos t
WHERE t.endpoint_id = %(endpoint_id)s AND t.state = 'pending' GROUP BY t.queue
UNION ALL
SELECT 'claimed', t.queue, count(*) FROM todos t
WHERE t.endpoint_id = %(endpoint_id)s AND t.state = 'claimed' GROUP BY t.queue
UNION ALL
SELECT 'retry', t.queue, count(*) FROM todos t
WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.endpoint_id = %(endpoint_id)s GROUP BY t.queue

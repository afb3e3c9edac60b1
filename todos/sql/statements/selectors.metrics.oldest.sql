-- selectors.metrics.oldest
-- the constant todos.core.selectors.metrics.SQL['oldest']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT extract(epoch FROM now() - min(o.created_at)) AS age FROM endpoints e
CROSS JOIN LATERAL (
    SELECT t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.state = 'pending'
    ORDER BY t.created_at LIMIT 1) o

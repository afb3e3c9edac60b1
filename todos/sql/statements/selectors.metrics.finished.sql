-- selectors.metrics.finished
-- the constant todos.core.selectors.metrics.SQL['finished']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT f.state, count(*) AS n FROM endpoints e
CROSS JOIN LATERAL (
    SELECT t.state FROM todos t WHERE t.endpoint_id = e.id AND t.completed_at > now() - interval '1 hour') f
GROUP BY f.state

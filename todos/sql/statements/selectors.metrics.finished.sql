-- selectors.metrics.finished
-- the constant todos.core.selectors.metrics.SQL['finished']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT state, count(*) AS n FROM todos
WHERE completed_at > now() - interval '1 hour' GROUP BY state

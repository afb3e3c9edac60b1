-- selectors.metrics.endpoints
-- the constant todos.core.selectors.metrics.SQL['endpoints']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT state, count(*) AS n FROM endpoints GROUP BY state

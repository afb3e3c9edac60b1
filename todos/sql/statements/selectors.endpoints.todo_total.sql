-- selectors.endpoints.todo_total
-- built by todos.core.selectors.endpoints.todo_total(), the statement #1 it runs
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS n FROM (SELECT 1 FROM todos t WHERE t.endpoint_id = %s ORDER BY t.created_at LIMIT %s) c

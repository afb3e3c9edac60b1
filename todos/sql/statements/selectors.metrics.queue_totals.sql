-- selectors.metrics.queue_totals
-- the constant todos.core.selectors.metrics.SQL['queue_totals']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT queue, completed, failed, died, waited, ran FROM todo_flow_totals

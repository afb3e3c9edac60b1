-- selectors.metrics.queue_states
-- the constant todos.core.selectors.metrics.SQL['queue_states']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT queue, state, sum(n)::bigint AS n FROM todo_counts
WHERE state IN ('pending', 'claimed', 'retry', 'dead') GROUP BY queue, state

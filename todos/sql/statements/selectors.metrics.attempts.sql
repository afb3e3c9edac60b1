-- selectors.metrics.attempts
-- the constant todos.core.selectors.metrics.SQL['attempts']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT o.outcome, sum(o.n)::bigint AS n FROM (
    SELECT e.id FROM endpoints e UNION ALL SELECT NULL::uuid
) e(id)
CROSS JOIN LATERAL (
    SELECT a.outcome, count(*) AS n FROM todo_attempts a
    WHERE a.claimer_endpoint_id IS NOT DISTINCT FROM e.id AND a.ended_at > now() - interval '1 hour'
    GROUP BY a.outcome) o
GROUP BY o.outcome

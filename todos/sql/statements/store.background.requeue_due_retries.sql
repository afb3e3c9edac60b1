-- store.background.requeue_due_retries
-- built by todos.core.store.background.requeue_due_retries()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH cand AS (
    SELECT t.id, t.state AS prior_state FROM todos t
    WHERE t.next_retry_at <= now() AND t.state IN ('failed', 'pending')
    ORDER BY t.next_retry_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
),
requeued AS (
    UPDATE todos t SET state = 'pending', next_retry_at = NULL, updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state IN ('failed', 'pending') AND t.next_retry_at <= now()
    RETURNING t.*, c.prior_state
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'requeue',
           CASE r.prior_state WHEN 'failed' THEN 'retry' ELSE 'scheduled' END,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           NULL
    FROM requeued r JOIN endpoints le ON le.id = r.endpoint_id)
SELECT r.id,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM requeued WHERE TRUE
                      GROUP BY 1, 2) w) AS notified
FROM requeued r

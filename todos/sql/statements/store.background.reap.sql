-- store.background.reap
-- built by todos.core.store.background.reap()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH cand AS (
    SELECT t.id, (t.attempt >= t.max_attempts OR e.state = 'revoked') AS dead
    FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.state = 'claimed' AND t.lease_expires_at < now()
    ORDER BY t.lease_expires_at
    LIMIT %(limit)s
    FOR UPDATE OF t SKIP LOCKED
),
reaped AS (
    UPDATE todos t SET
        state = CASE WHEN c.dead THEN 'failed' ELSE 'pending' END,
        completed_at = CASE WHEN c.dead THEN now() END,
        failure_reason_group = (
            SELECT board_reason_group(a.error, a.summary, t.result->>'error')
            FROM (SELECT 1) one LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total),
        owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state = 'claimed' AND t.lease_expires_at < now()
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'reaped',
        disposition = CASE WHEN r.state = 'failed' THEN 'dead_lettered' ELSE 'requeued' END
    FROM reaped r
    WHERE a.todo_id = r.id AND a.seq = r.attempts_total AND a.ended_at IS NULL
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'reap',
           'claimed',
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           CASE WHEN (todo_board_state(r.state, r.next_retry_at)) IS DISTINCT FROM 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM reaped r JOIN endpoints le ON le.id = r.endpoint_id),
kids AS MATERIALIZED (
    SELECT k.* FROM todo_parents_failed(ARRAY(SELECT f.id FROM (SELECT id FROM reaped WHERE state = 'failed') f)) k
    WHERE k.next_retry_at IS DISTINCT FROM 'infinity'
),
kids_unblocked AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, (SELECT 'requeue'::change_op),
           'blocked',
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           NULL
    FROM (SELECT * FROM kids WHERE state = 'pending')  r JOIN endpoints le ON le.id = r.endpoint_id),
kids_canceled AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, (SELECT 'cancel'::change_op),
           'blocked',
           'canceled',
           NULL,
           NULL,
           NULL
    FROM (SELECT * FROM kids WHERE state = 'canceled')  r JOIN endpoints le ON le.id = r.endpoint_id)
SELECT r.id,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM reaped WHERE state = 'pending'
                      GROUP BY 1, 2) w) AS notified,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM kids WHERE state = 'pending' AND next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS woken
FROM reaped r

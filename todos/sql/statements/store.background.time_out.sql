-- store.background.time_out
-- built by todos.core.store.background.time_out()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH cand AS (
    SELECT t.id, lim.seconds,
           (t.attempt >= t.max_attempts OR e.state = 'revoked') AS dead
    FROM todos t
    JOIN endpoints e ON e.id = t.endpoint_id
    CROSS JOIN LATERAL (
        SELECT coalesce(t.timeout_seconds, (
            SELECT qs.timeout_seconds FROM queue_settings qs
            WHERE qs.team_id = e.team_id AND qs.queue = t.queue)) AS seconds
    ) lim
    WHERE t.state = 'claimed' AND t.owner LIKE 'endpoint:%%' AND t.lease_expires_at >= now()
      AND t.claimed_at + make_interval(secs => lim.seconds) < now()
    ORDER BY t.claimed_at
    LIMIT %(limit)s
    FOR UPDATE OF t SKIP LOCKED
),
timed AS (
    -- the guard again on the locked row: a complete (or any report) that won the lock ended it
    UPDATE todos t SET
        state = 'failed', owner = NULL, lease_expires_at = NULL,
        next_retry_at = CASE WHEN c.dead THEN NULL
            ELSE now() + least(interval '30 seconds' * power(2, least(greatest(t.attempt - 1, 0), 10)),
                  interval '15 minutes') END,
        completed_at = CASE WHEN c.dead THEN now() END,
        failure_reason_group = board_reason_group(jsonb_build_object(
            'type', 'timed_out',
            'message', format('ran past its run-time limit of %%s seconds', c.seconds),
            'truncated', false), NULL, NULL),
        updated_at = now()
    FROM cand c
    WHERE t.id = c.id AND t.state = 'claimed' AND t.lease_expires_at >= now()
      AND t.claimed_at + make_interval(secs => c.seconds) < now()
    RETURNING t.*, jsonb_build_object(
            'type', 'timed_out',
            'message', format('ran past its run-time limit of %%s seconds', c.seconds),
            'truncated', false) AS timeout_error
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'timed_out',
        disposition = CASE WHEN r.next_retry_at IS NULL THEN 'dead_lettered' ELSE 'retry_scheduled' END,
        error = r.timeout_error,
        search_doc = (
            SELECT CASE WHEN s.e IS NULL AND nullif(s.t, '') IS NULL THEN NULL
                   ELSE to_tsvector('simple'::regconfig, coalesce(s.e ->> 'type', ''))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, replace(coalesce(s.e ->> 'type', ''), '.', ' '))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, coalesce(s.t, ''))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, coalesce(s.e ->> 'message', '')) END
            -- OFFSET 0: each value is read (and checked against its domain) once, not per use
            FROM (SELECT (r.timeout_error)::jsonb AS e, (a.summary)::text AS t OFFSET 0) s)
    FROM timed r
    WHERE a.todo_id = r.id AND a.seq = r.attempts_total AND a.ended_at IS NULL
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'timeout',
           'claimed',
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           CASE WHEN (todo_board_state(r.state, r.next_retry_at)) IS DISTINCT FROM 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM timed r JOIN endpoints le ON le.id = r.endpoint_id),
kids AS MATERIALIZED (
    SELECT k.* FROM todo_parents_failed(ARRAY(SELECT f.id FROM (SELECT id FROM timed WHERE next_retry_at IS NULL) f)) k
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
SELECT r.id, (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM kids WHERE state = 'pending' AND next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS woken FROM timed r

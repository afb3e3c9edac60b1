-- store.endpoints.revoke.by_command
-- built by todos.core.store.endpoints.revoke()
-- with:
--   by = None
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH revoked AS (
    UPDATE endpoints e SET state = 'revoked', revoked_at = now()
    WHERE e.id = %(endpoint_id)s AND e.state = 'active'
      AND TRUE
    RETURNING e.*
),
live AS (
    -- the revoked endpoints' live todos, locked, with their Board state before they die
    SELECT t.id, r.slug, todo_board_state(t.state, t.next_retry_at) AS state_before
    FROM todos t JOIN revoked r ON t.endpoint_id = r.id
    WHERE (t.state = 'pending'
           OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL))
           OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))
    ORDER BY t.id
    FOR UPDATE OF t
),
dead AS (
    -- live work of a revoked endpoint can never be claimed again: dead-letter it
    UPDATE todos t SET state = 'failed', next_retry_at = NULL, owner = NULL, lease_expires_at = NULL,
        completed_at = now(), updated_at = now(),
        result = jsonb_build_object('error', 'endpoint_revoked', 'endpoint', l.slug, 'revoked_at', now()),
        failure_reason_group = (
            SELECT board_reason_group(a.error, a.summary, 'endpoint_revoked')
            FROM (SELECT 1) one LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total)
    FROM live l
    WHERE t.id = l.id AND (t.state = 'pending'
           OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL))
           OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))
    RETURNING t.*, l.state_before
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'revoked', disposition = 'dead_lettered'
    FROM dead d
    WHERE a.todo_id = d.id AND a.seq = d.attempts_total AND a.ended_at IS NULL
),
logged_todos AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'revoke',
           r.state_before,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           CASE WHEN (r.state_before) = 'claimed'
                  AND (todo_board_state(r.state, r.next_retry_at)) IS DISTINCT FROM 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM dead r JOIN endpoints le ON le.id = r.endpoint_id),
kids AS MATERIALIZED (
    SELECT k.* FROM todo_parents_failed(ARRAY(SELECT f.id FROM dead f)) k
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
    FROM (SELECT * FROM kids WHERE state = 'canceled')  r JOIN endpoints le ON le.id = r.endpoint_id),
children_woken AS (SELECT (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM kids WHERE state = 'pending' AND next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS n),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'revoke', NULL, NULL, NULL, NULL, NULL
    FROM revoked n),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, %(user_id)s, %(actor)s, 'endpoint.revoke', NULL, s.id, NULL, %(note)s,
           jsonb_build_object('dead_lettered', (SELECT count(*) FROM dead))
    FROM revoked s),
result AS (
    SELECT r.*, (SELECT coalesce(array_agg(d.id), '{}') FROM dead d) AS dead_ids,
           (SELECT n FROM children_woken) AS children_woken
    FROM revoked r
)
SELECT x.*,
       (SELECT TRUE
        FROM endpoints e WHERE e.id = %(endpoint_id)s) AS member,
       (SELECT TRUE
        FROM endpoints e WHERE e.id = %(endpoint_id)s) AS admin,
       (SELECT count(pg_notify('board_credentials', json_build_object('endpoints', c.ids)::text))
        FROM (SELECT CASE WHEN count(*) <= 100 THEN array_agg(n.id) END AS ids
              FROM revoked n HAVING count(*) > 0) c) AS forgotten
FROM (SELECT 1) one LEFT JOIN result x ON true

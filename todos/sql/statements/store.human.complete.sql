-- store.human.complete
-- built by todos.core.store.human.complete()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   todo_id = 'td_00000000000000000000000000000001'
--   note = 'done by hand'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH prior AS (
    SELECT t.id, todo_board_state(t.state, t.next_retry_at) AS state_before FROM todos t
    WHERE t.id = %(id)s AND t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe
        WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = oe.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin')))
      AND t.state = 'claimed' AND t.owner = %(owner)s AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)
    FOR UPDATE
),
upd AS (
    UPDATE todos t SET state = 'done', result = %(result)s, owner = NULL, lease_expires_at = NULL,
            completed_at = now(), updated_at = now()
    FROM prior p
    WHERE t.id = p.id AND t.state = 'claimed' AND t.owner = %(owner)s AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)
    RETURNING t.*, p.state_before
),
open_attempt AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'completed', disposition = 'done',
            summary = %(summary)s, summary_truncated = %(summary_truncated)s,
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
            FROM (SELECT (a.error)::jsonb AS e, (%(summary)s::attempt_summary)::text AS t OFFSET 0) s)
    FROM upd u
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT ae.team_id, %(user_id)s, %(actor)s, 'todo.complete', r.id, r.endpoint_id, r.queue, %(note)s,
           %(detail)s
    FROM upd r JOIN endpoints ae ON ae.id = r.endpoint_id),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'complete',
           r.state_before,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           CASE WHEN (r.state_before) = 'claimed'
                  AND (todo_board_state(r.state, r.next_retry_at)) IS DISTINCT FROM 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM upd r JOIN endpoints le ON le.id = r.endpoint_id),
result AS (
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent,
           0 AS notified,
           coalesce((SELECT todo_children_done(p.ids)
                     FROM (SELECT array_agg(f.id) AS ids FROM upd f WHERE f.has_children) p
                     WHERE p.ids IS NOT NULL), 0) AS woken
    FROM upd
)
SELECT r.*, CASE
        WHEN r.id IS NOT NULL THEN NULL
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe
        WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = oe.team_id AND m.user_id = %(user_id)s)))
        THEN 'not_found'
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe
        WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = oe.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin'))))
        THEN 'forbidden'
        ELSE 'conflict' END AS miss FROM (SELECT 1) one LEFT JOIN result r ON true

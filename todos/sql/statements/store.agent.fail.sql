-- store.agent.fail
-- built by todos.core.store.agent.fail()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   todo_id = 'td_00000000000000000000000000000001'
--   summary = 'timeout'
--   lease_token = 'AAAAAAAAAAAAAAAAAAAAAA'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH upd AS (
    UPDATE todos t SET state = 'failed', result = %(result)s, owner = NULL, lease_expires_at = NULL,
            failure_reason_group = board_reason_group(%(error)s::jsonb, %(summary)s::text, %(result)s::jsonb->>'error'),
            next_retry_at = CASE WHEN t.attempt < t.max_attempts
                THEN now() + least(interval '30 seconds' * power(2, least(greatest(t.attempt - 1, 0), 10)),
                  interval '15 minutes') END,
            completed_at = CASE WHEN t.attempt < t.max_attempts THEN NULL ELSE now() END, updated_at = now()
    WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = 'claimed' AND t.owner = %(owner)s AND EXISTS (
        SELECT 1 FROM todo_attempts fa
        WHERE fa.todo_id = t.id AND fa.seq = t.attempts_total AND fa.ended_at IS NULL
          AND ((fa.lease_token_hash IS NULL AND %(token_hash)s::bytea IS NULL)
               OR fa.lease_token_hash = %(token_hash)s::bytea))
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'failed',
            disposition = CASE WHEN u.next_retry_at IS NULL THEN 'dead_lettered' ELSE 'retry_scheduled' END,
            summary = %(summary)s, summary_truncated = %(summary_truncated)s, artifact = %(artifact)s,
            error = %(error)s, traceparent = %(traceparent)s,
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
            FROM (SELECT (%(error)s::attempt_error)::jsonb AS e, (%(summary)s::attempt_summary)::text AS t OFFSET 0) s)
    FROM upd u
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
    RETURNING a.todo_id
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT %(team_id)s, r.endpoint_id, r.id, r.queue, 'fail',
           'claimed',
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           CASE WHEN (todo_board_state(r.state, r.next_retry_at)) IS DISTINCT FROM 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM upd r),
kids AS MATERIALIZED (
    SELECT k.* FROM todo_parents_failed(ARRAY(SELECT f.id FROM (SELECT id FROM upd WHERE next_retry_at IS NULL) f)) k
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
result AS (
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent,
           (SELECT count(*) FROM closed) AS closed, 0 AS notified,
           (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM kids WHERE state = 'pending' AND next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS woken
    FROM upd
)
SELECT r.*, CASE WHEN r.id IS NOT NULL THEN NULL
        ELSE agent_todo_miss(%(id)s, %(endpoint_id)s, %(queues)s::text[]) END AS miss
FROM (SELECT 1) one LEFT JOIN result r ON true

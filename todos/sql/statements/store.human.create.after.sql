-- store.human.create.after
-- built by todos.core.store.human.create()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   queue = 'default'
--   title = 'Check this'
--   after = ['td_00000000000000000000000000000001', 'td_00000000000000000000000000000002']
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   rate_key = 'crawl:upstream'
--   timeout_seconds = 600
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH parents AS MATERIALIZED (
    SELECT p.id, CASE
            WHEN p.state = 'done' THEN 'done'
            WHEN p.state = 'canceled'
              OR (p.state = 'failed' AND p.next_retry_at IS NULL) THEN 'ended'
            ELSE 'open' END AS standing
    FROM todos p JOIN endpoints pe ON pe.id = p.endpoint_id
    WHERE p.id = ANY(%(after)s::text[]) AND pe.team_id = %(team_id)s
    ORDER BY p.id
    FOR NO KEY UPDATE OF p
),
refused AS (
    SELECT a.n - 1 AS n, CASE WHEN p.id IS NULL THEN 'unknown' ELSE 'ended' END AS why
    FROM unnest(%(after)s::text[]) WITH ORDINALITY AS a(id, n)
    LEFT JOIN parents p ON p.id = a.id
    WHERE p.id IS NULL OR (p.standing = 'ended' AND %(on_parent_failure)s = 'cancel')
    ORDER BY a.n
    LIMIT 1
),
open_parents AS (SELECT count(*) FILTER (WHERE standing = 'open')::integer AS n FROM parents),
target AS (
    SELECT e.id, e.scope_queues FROM endpoints e
    WHERE e.id = %(endpoint_id)s
      AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s)
),
allowed AS (
    SELECT e.id FROM endpoints e
    WHERE e.id = %(endpoint_id)s
      AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin'))
      AND e.state = 'active' AND %(queue)s = ANY(e.scope_queues)
      AND e.team_id = %(team_id)s
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       priority, max_attempts, requires, rate_key, timeout_seconds,
                       next_retry_at, parents_left, on_parent_failure, run_at_after_block)
    SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), a.id, %(queue)s, %(source)s, %(kind)s,
           %(title)s, %(payload)s, %(key)s, %(priority)s, %(max_attempts)s, %(requires)s::text[],
           %(rate_key)s, %(timeout_seconds)s,
           -- blocked (scheduled for never) while a parent is open
           CASE WHEN (SELECT n FROM open_parents) > 0 THEN 'infinity'::timestamptz
                 WHEN %(not_before)s::timestamptz > now() THEN %(not_before)s::timestamptz END,
           (SELECT n FROM open_parents), %(on_parent_failure)s,
           CASE WHEN (SELECT n FROM open_parents) > 0 AND %(not_before)s::timestamptz > now()
                 THEN %(not_before)s::timestamptz END
    FROM allowed a
    WHERE NOT EXISTS (SELECT 1 FROM refused)
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
    DO NOTHING
    RETURNING *
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT ae.team_id, %(user_id)s, %(actor)s, 'todo.create', r.id, r.endpoint_id, r.queue, %(note)s,
           %(detail)s
    FROM ins r JOIN endpoints ae ON ae.id = r.endpoint_id),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'create',
           NULL,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           NULL
    FROM ins r JOIN endpoints le ON le.id = r.endpoint_id),
edges AS (
    INSERT INTO todo_dependencies (child_id, parent_id, settled)
    SELECT i.id, p.id, p.standing <> 'open'
    FROM ins i CROSS JOIN parents p
    RETURNING parent_id, settled
),
marked AS (
    UPDATE todos p SET has_children = true
    FROM edges e
    WHERE p.id = e.parent_id AND NOT e.settled AND NOT p.has_children
),
existing AS (
    SELECT * FROM todos  -- raw, like ins: result reads both through TODO_COLUMNS
    WHERE %(key)s::text IS NOT NULL AND endpoint_id = %(endpoint_id)s AND idempotency_key = %(key)s
      AND idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
      AND EXISTS (SELECT 1 FROM allowed)
),
result AS (
    SELECT true AS created, id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent,
           (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM ins WHERE next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS notified
    FROM ins
    UNION ALL
    SELECT false, id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent, 0
    FROM existing WHERE NOT EXISTS (SELECT 1 FROM ins)
)
SELECT r.*, CASE
    WHEN NOT EXISTS (SELECT 1 FROM target) THEN 'not_found'
    WHEN NOT EXISTS (SELECT 1 FROM allowed) THEN 'forbidden'
    ELSE 'conflict' END AS miss,
       (SELECT f.n FROM refused f) AS refused_n, (SELECT f.why FROM refused f) AS refused_why
FROM (SELECT 1) one LEFT JOIN result r ON true

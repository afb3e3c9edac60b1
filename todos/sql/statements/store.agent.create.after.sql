-- store.agent.create.after
-- built by todos.core.store.agent.create()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   queue = 'default'
--   title = 'Merge'
--   after = ['td_00000000000000000000000000000001', 'td_00000000000000000000000000000002']
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
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       assignee, priority, max_attempts, next_retry_at, concurrency_key, requires, timeout_seconds,
                       rate_key, traceparent, parents_left, on_parent_failure, run_at_after_block)
    SELECT 'td_' || replace(gen_random_uuid()::text, '-', ''), %(endpoint_id)s, %(queue)s,
           %(source)s, %(kind)s, %(title)s, %(payload)s, %(key)s, %(assignee)s, %(priority)s,
           %(max_attempts)s,
           -- blocked (scheduled for never) while a parent is open; its own time waits aside
           CASE WHEN (SELECT n FROM open_parents) > 0 THEN 'infinity'::timestamptz
                 WHEN %(not_before)s::timestamptz > now() THEN %(not_before)s::timestamptz END,
           %(concurrency_key)s, %(requires)s::text[], %(timeout_seconds)s, %(rate_key)s, %(traceparent)s,
           (SELECT n FROM open_parents), %(on_parent_failure)s,
           CASE WHEN (SELECT n FROM open_parents) > 0 AND %(not_before)s::timestamptz > now()
                 THEN %(not_before)s::timestamptz END
    WHERE NOT EXISTS (SELECT 1 FROM refused)
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
    DO NOTHING
    RETURNING *
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT %(team_id)s, r.endpoint_id, r.id, r.queue, 'create',
           NULL,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           NULL
    FROM ins r),
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
)
SELECT a.*, f.n AS refused_n, f.why AS refused_why
FROM (SELECT 1) one
LEFT JOIN (SELECT true AS created, id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
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
           traceparent, 0 FROM todos
WHERE %(key)s::text IS NOT NULL AND endpoint_id = %(endpoint_id)s AND idempotency_key = %(key)s
  AND idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM ins)) a ON true
LEFT JOIN refused f ON true

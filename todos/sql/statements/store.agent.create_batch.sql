-- store.agent.create_batch
-- built by todos.core.store.agent.create_batch()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   items = [{'queue': 'default', 'title': 'Resize image', 'idempotency_key': 'job-1'},
--       {'queue': 'default', 'title': 'Crop'}]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH item AS MATERIALIZED (
    SELECT i.*, 'td_' || replace(gen_random_uuid()::text, '-', '') AS id
    FROM unnest(%(queues)s::text[], %(titles)s::text[], %(kinds)s::text[], %(sources)s::text[],
                %(payloads)s::jsonb[], %(keys)s::text[], %(assignees)s::text[], %(priorities)s::integer[],
                %(max_attempts)s::integer[], %(not_befores)s::timestamptz[], %(concurrency_keys)s::text[],
                %(requires)s::jsonb[], %(timeouts)s::integer[], %(rate_keys)s::text[], %(traceparents)s::text[])
         WITH ORDINALITY AS i(queue, title, kind, source, payload, key, assignee, priority, max_attempts,
                              not_before, concurrency_key, requires, timeout_seconds, rate_key, traceparent, n)
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       assignee, priority, max_attempts, next_retry_at, concurrency_key, requires, timeout_seconds,
                       rate_key, traceparent)
    SELECT i.id, %(endpoint_id)s, i.queue, i.source, i.kind, i.title, i.payload, i.key, i.assignee,
           i.priority, i.max_attempts,
           -- a time already reached is "now": no schedule, claimable at once
           CASE WHEN i.not_before > now() THEN i.not_before END,
           i.concurrency_key, ARRAY(SELECT jsonb_array_elements_text(i.requires)), i.timeout_seconds,
           i.rate_key, i.traceparent
    FROM item i
    ORDER BY i.n  -- the first item with a key takes it
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
notified AS (SELECT (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM ins WHERE next_retry_at IS NULL
                      GROUP BY 1, 2) w) AS n),
answer AS (
    -- per item: the todo it created, else the one holding its key (made by an earlier item of the
    -- batch, or live before it), else none (a concurrent create holds the key, not yet visible)
    SELECT i.n, i.id AS item_id, coalesce(mine.id, earlier.id, live.id) AS todo_id, mine.id IS NOT NULL AS created
    FROM item i
    LEFT JOIN ins mine ON mine.id = i.id
    LEFT JOIN LATERAL (SELECT e.id FROM ins e WHERE i.key IS NOT NULL AND e.idempotency_key = i.key) earlier
           ON mine.id IS NULL
    LEFT JOIN LATERAL (
        SELECT t.id FROM todos t
        WHERE i.key IS NOT NULL AND t.endpoint_id = %(endpoint_id)s AND t.idempotency_key = i.key
          AND idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
    ) live ON mine.id IS NULL AND earlier.id IS NULL
)
SELECT a.n, a.item_id, a.created, (SELECT n FROM notified) AS notified, r.*
FROM answer a
LEFT JOIN LATERAL (
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent
    FROM ins WHERE ins.id = a.todo_id
    UNION ALL
    -- a todo this statement did not write (its rows are not visible in todos here)
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent FROM todos
    WHERE todos.id = a.todo_id AND NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = a.todo_id)
) r ON true
ORDER BY a.n

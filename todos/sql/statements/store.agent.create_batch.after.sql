-- store.agent.create_batch.after
-- built by todos.core.store.agent.create_batch()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   items = [{'queue': 'default', 'title': 'Plan', 'idempotency_key': 'plan-1'}, {'queue':
--       'default', 'title': 'Step', 'after_items': [0]}, {'queue': 'default', 'title': 'Merge',
--       'after': ['td_00000000000000000000000000000001'], 'after_items': [0, 1],
--       'on_parent_failure': 'run'}]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH item AS MATERIALIZED (
    SELECT i.*, 'td_' || replace(gen_random_uuid()::text, '-', '') AS id
    FROM unnest(%(queues)s::text[], %(titles)s::text[], %(kinds)s::text[], %(sources)s::text[],
                %(payloads)s::jsonb[], %(keys)s::text[], %(assignees)s::text[], %(priorities)s::integer[],
                %(max_attempts)s::integer[], %(not_befores)s::timestamptz[], %(concurrency_keys)s::text[],
                %(requires)s::jsonb[], %(timeouts)s::integer[], %(rate_keys)s::text[], %(traceparents)s::text[],
                %(afters)s::jsonb[], %(after_items)s::jsonb[], %(rules)s::text[])
         WITH ORDINALITY AS i(queue, title, kind, source, payload, key, assignee, priority, max_attempts,
                              not_before, concurrency_key, requires, timeout_seconds, rate_key, traceparent,
                              after, after_items, rule, n)
),
parents AS MATERIALIZED (
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
refd AS (
    SELECT i.n, CASE WHEN lv.state = 'canceled' THEN 'ended' ELSE 'open' END AS standing
    FROM item i
    LEFT JOIN LATERAL (
        SELECT t.state FROM todos t
        WHERE i.key IS NOT NULL AND t.endpoint_id = %(endpoint_id)s AND t.idempotency_key = i.key
          AND t.state <> 'done' AND (t.state <> 'failed' OR t.next_retry_at IS NOT NULL)
    ) lv ON true
),
refused AS (
    SELECT * FROM (
        SELECT i.n - 1 AS item, 'after' AS field, a.k - 1 AS idx,
               CASE WHEN p.id IS NULL THEN 'unknown' ELSE 'ended' END AS why
        FROM item i CROSS JOIN LATERAL jsonb_array_elements_text(i.after) WITH ORDINALITY AS a(id, k)
        LEFT JOIN parents p ON p.id = a.id
        WHERE p.id IS NULL OR (p.standing = 'ended' AND i.rule = 'cancel')
        UNION ALL
        SELECT i.n - 1, 'after_items', r.k - 1, 'ended'
        FROM item i CROSS JOIN LATERAL jsonb_array_elements(i.after_items) WITH ORDINALITY AS r(ref, k)
        JOIN refd ON refd.n = (r.ref)::integer + 1
        WHERE refd.standing = 'ended' AND i.rule = 'cancel'
    ) x
    ORDER BY item, field, idx
    LIMIT 1
),
named AS (
    SELECT DISTINCT k.n, k.key
    FROM item i CROSS JOIN LATERAL jsonb_array_elements(i.after_items) r(ref)
    JOIN item k ON k.n = (r.ref)::integer + 1
),
need AS (
    SELECT i.n,
           (SELECT count(*) FROM jsonb_array_elements_text(i.after) a(id) JOIN parents p ON p.id = a.id
            WHERE p.standing = 'open')::integer
         + (SELECT count(*) FROM jsonb_array_elements(i.after_items) r(ref) JOIN refd ON refd.n = (r.ref)::integer + 1
            WHERE refd.standing = 'open')::integer AS open
    FROM item i
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
                       assignee, priority, max_attempts, next_retry_at, concurrency_key, requires, timeout_seconds,
                       rate_key, traceparent,
                       parents_left, on_parent_failure, run_at_after_block, has_children)
    SELECT i.id, %(endpoint_id)s, i.queue, i.source, i.kind, i.title, i.payload, i.key, i.assignee,
           i.priority, i.max_attempts,
           -- blocked (scheduled for never) while a parent is open; its own time waits aside
           CASE WHEN w.open > 0 THEN 'infinity'::timestamptz WHEN i.not_before > now() THEN i.not_before END,
           i.concurrency_key, ARRAY(SELECT jsonb_array_elements_text(i.requires)), i.timeout_seconds,
           i.rate_key, i.traceparent,
           w.open, i.rule, CASE WHEN w.open > 0 AND i.not_before > now() THEN i.not_before END,
           (i.n IN (SELECT n FROM named) OR i.key IN (SELECT key FROM named WHERE key IS NOT NULL)) IS TRUE
    FROM item i JOIN need w ON w.n = i.n
    WHERE NOT EXISTS (SELECT 1 FROM refused)
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
),
edges AS (
    INSERT INTO todo_dependencies (child_id, parent_id, settled)
    SELECT c.id, p.id, p.standing <> 'open'
    FROM ins c JOIN item i ON i.id = c.id
    CROSS JOIN LATERAL jsonb_array_elements_text(i.after) a(id)
    JOIN parents p ON p.id = a.id
    UNION ALL
    SELECT c.id, pa.todo_id, refd.standing <> 'open'
    FROM ins c JOIN item i ON i.id = c.id
    CROSS JOIN LATERAL jsonb_array_elements(i.after_items) r(ref)
    JOIN answer pa ON pa.n = (r.ref)::integer + 1
    JOIN refd ON refd.n = pa.n
    WHERE pa.todo_id IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING parent_id, settled
),
marked AS (
    UPDATE todos p SET has_children = true
    FROM edges e
    WHERE p.id = e.parent_id AND NOT e.settled AND NOT p.has_children
)
SELECT a.n, a.item_id, a.created, (SELECT n FROM notified) AS notified, r.*,
       f.item AS refused_item, f.field AS refused_field, f.idx AS refused_n, f.why AS refused_why
FROM answer a LEFT JOIN refused f ON true
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

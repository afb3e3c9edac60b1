-- store.agent.complete_batch
-- built by todos.core.store.agent.complete_batch()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   items = [{'id': 'td_00000000000000000000000000000001'}, {'id':
--       'td_00000000000000000000000000000002'}]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH item AS (
    SELECT * FROM unnest(%(ids)s::text[], %(results)s::jsonb[], %(summaries)s::text[],
                         %(truncs)s::boolean[], %(artifacts)s::text[], %(hashes)s::bytea[],
                         %(traceparents)s::text[], %(errors)s::jsonb[])
           WITH ORDINALITY AS i(id, result, summary, summary_truncated, artifact, token_hash, traceparent, error, n)
),
upd AS (
    UPDATE todos t SET state = 'done', result = i.result, owner = NULL, lease_expires_at = NULL,
                       completed_at = now(), updated_at = now()
    FROM item i
    WHERE t.id = i.id AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = 'claimed' AND t.owner = %(owner)s
      AND EXISTS (SELECT 1 FROM todo_attempts fa
                  WHERE fa.todo_id = t.id AND fa.seq = t.attempts_total AND fa.ended_at IS NULL
                    AND ((fa.lease_token_hash IS NULL AND i.token_hash IS NULL)
                         OR fa.lease_token_hash = i.token_hash))
    RETURNING t.*
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'completed', disposition = 'done',
        summary = i.summary, summary_truncated = i.summary_truncated, artifact = i.artifact,
        error = i.error, traceparent = i.traceparent,
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
            FROM (SELECT (i.error)::jsonb AS e, (i.summary)::text AS t OFFSET 0) s)
    FROM upd u JOIN item i ON i.id = u.id
    WHERE a.todo_id = u.id AND a.seq = u.attempts_total AND a.ended_at IS NULL
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT %(team_id)s, r.endpoint_id, r.id, r.queue, 'complete',
           'claimed',
           'done',
           NULL,
           NULL,
           extract(epoch FROM now() - r.claimed_at)::double precision
    FROM upd r),
answered AS (SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent FROM upd)
SELECT i.id AS item_id, i.n, u.*, coalesce((SELECT todo_children_done(p.ids)
                     FROM (SELECT array_agg(f.id) AS ids FROM upd f WHERE f.has_children) p
                     WHERE p.ids IS NOT NULL), 0) AS woken,
       CASE WHEN u.id IS NOT NULL THEN NULL
            WHEN tt.id IS NULL THEN 'not_found'
            WHEN NOT tt.queue = ANY(%(queues)s::text[]) THEN 'forbidden'
            ELSE 'conflict' END AS miss
FROM item i
LEFT JOIN answered u ON u.id = i.id
LEFT JOIN todos tt ON tt.id = i.id AND tt.endpoint_id = %(endpoint_id)s
ORDER BY i.n

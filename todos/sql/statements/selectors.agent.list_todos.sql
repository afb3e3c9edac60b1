-- selectors.agent.list_todos
-- built by todos.core.selectors.agent_api.list_todos()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent FROM todos t
              WHERE t.endpoint_id = %(endpoint_id)s
                AND t.queue = ANY(%(queues)s::text[])
              ORDER BY t.created_at DESC, t.id DESC
              LIMIT %(fetch)s

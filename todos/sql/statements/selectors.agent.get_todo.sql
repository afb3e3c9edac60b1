-- selectors.agent.get_todo
-- built by todos.core.selectors.agent_api.get_todo()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   todo_id = 'td_00000000000000000000000000000001'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent,
       (SELECT coalesce(json_agg(a ORDER BY a.seq DESC), '[]'::json) FROM (
            SELECT seq, attempt, claimer_kind, claimant, owner, claimed_at, last_heartbeat_at,
                    lease_expires_at, ended_at, outcome, disposition,
                    summary, summary_truncated, artifact, ended_by, error, traceparent
            FROM todo_attempts a
            WHERE a.todo_id = t.id ORDER BY a.seq DESC LIMIT %(limit)s) a) AS attempts,
       -- its parents, done or not
       ARRAY(SELECT d.parent_id FROM todo_dependencies d WHERE d.child_id = t.id ORDER BY d.parent_id) AS after
FROM todos t
WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])

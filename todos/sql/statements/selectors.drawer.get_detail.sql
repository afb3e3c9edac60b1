-- selectors.drawer.get_detail
-- built by todos.core.selectors.drawer.get_detail(), the statement #1 it runs
-- with:
--   viewer = Viewer(user_id=7, username='olive', is_superuser=False,
--       teams=(TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a001'), slug='team-a',
--       name='Alpha', role='operator'),
--       TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a002'), slug='team-b', name='Beta',
--       role='viewer')),
--       endpoints=(EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='worker', name='Worker',
--       state='active', scope_queues=('default', 'other'), capabilities=()),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e002'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='sibling', name='Sibling',
--       state='active', scope_queues=('default',), capabilities=()),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e003'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a002'), slug='watcher', name='Watcher',
--       state='active', scope_queues=('default',), capabilities=())))
--   todo_id = 'td_00000000000000000000000000000001'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT t.id, t.endpoint_id, t.queue, t.kind, t.title, t.state,
       t.owner, t.assignee, t.priority, t.attempt, t.max_attempts, t.attempts_total,
       t.lease_expires_at,
       nullif(t.next_retry_at, 'infinity') AS next_retry_at,
       (t.state = 'pending' AND t.next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
       t.created_at, t.updated_at, t.claimed_at, t.completed_at, t.concurrency_key, t.requires,
       (t.state = 'claimed' AND t.lease_expires_at < now()) AS lease_lapsed,
       t.source, t.payload, t.idempotency_key, t.attempts_pruned, t.result, t.parents_left, t.on_parent_failure,
       e.team_id,
       EXISTS (SELECT 1 FROM queue_pauses qp WHERE qp.team_id = e.team_id AND qp.queue = t.queue) AS paused,
       t.timeout_seconds, lim.seconds AS run_time_limit,
       CASE WHEN t.state = 'claimed' THEN t.claimed_at + make_interval(secs => lim.seconds) END AS run_time_ends_at,
       t.rate_key, t.traceparent,
       (SELECT rl.allowance || ' per ' || rl.per FROM rate_limits rl
        WHERE rl.team_id = e.team_id AND rl.key = t.rate_key) AS rate_limit
FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
-- the limit that applies: the todo's own, else its team's default for the queue
CROSS JOIN LATERAL (
    SELECT coalesce(t.timeout_seconds, (
        SELECT qs.timeout_seconds FROM queue_settings qs
        WHERE qs.team_id = e.team_id AND qs.queue = t.queue)) AS seconds
) lim
WHERE t.id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])

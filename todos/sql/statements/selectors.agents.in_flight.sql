-- selectors.agents.in_flight
-- built by todos.core.selectors.agents.agents(), the statement #1 it runs
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
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT t.endpoint_id, t.id, t.title, t.queue, t.lease_expires_at, t.claimed_at,
       (t.lease_expires_at < now()) AS lapsed, a.claimant, a.last_heartbeat_at
FROM todos t
LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total AND a.ended_at IS NULL
WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
  AND t.owner = 'endpoint:' || t.endpoint_id::text
ORDER BY t.claimed_at

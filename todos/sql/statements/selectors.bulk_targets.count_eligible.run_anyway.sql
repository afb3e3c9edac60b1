-- selectors.bulk_targets.count_eligible.run_anyway
-- built by todos.core.selectors.bulk_targets.count_eligible(), the statement #1 it runs
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
--   ids = ['td_00000000000000000000000000000001', 'td_00000000000000000000000000000002']
--   action = 'run_anyway'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS n FROM todos t
WHERE t.id = ANY(%s::text[]) AND t.endpoint_id = ANY(%s::uuid[])
  AND t.state = 'pending' AND t.next_retry_at = 'infinity'

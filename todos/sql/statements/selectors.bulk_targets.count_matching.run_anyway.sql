-- selectors.bulk_targets.count_matching.run_anyway
-- built by todos.core.selectors.bulk_targets.count_matching(), the statement #1 it runs
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
--   f = TodoFilter(state='blocked', queue='', endpoint='', team='', mine=False, q='', kind='',
--       priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='newest', after=None, before=None, errors=())
--   action = 'run_anyway'
--   cap = 10000
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS n FROM (
    SELECT 1 FROM unnest(%(eps)s::uuid[]) AS e(id)
    CROSS JOIN LATERAL (
        SELECT 1 FROM todos t
        WHERE t.endpoint_id = e.id AND t.state = 'pending'
        AND t.next_retry_at = 'infinity'
        AND t.state = 'pending' AND t.next_retry_at = 'infinity') x
    LIMIT %(cap)s) c

-- selectors.todo_list.list_page.queue_pairs
-- built by todos.core.selectors.todo_list.list_page(), the statement #1 it runs
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
--   f = TodoFilter(state='pending', queue='', endpoint='', team='', mine=False, q='', kind='',
--       priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='priority', after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH RECURSIVE qs AS (
    SELECT e.id AS endpoint_id,
           (SELECT t.queue FROM todos t WHERE t.endpoint_id = e.id AND t.state = 'pending'
            ORDER BY t.queue LIMIT 1) AS queue
    FROM unnest(%(eps)s::uuid[]) AS e(id)
    UNION ALL
    SELECT qs.endpoint_id,
           (SELECT t.queue FROM todos t WHERE t.endpoint_id = qs.endpoint_id AND t.state = 'pending'
              AND t.queue > qs.queue ORDER BY t.queue LIMIT 1)
    FROM qs WHERE qs.queue IS NOT NULL
)
SELECT endpoint_id, queue FROM qs WHERE queue IS NOT NULL

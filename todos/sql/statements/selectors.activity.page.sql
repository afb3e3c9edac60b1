-- selectors.activity.page
-- built by todos.core.selectors.activity.activity(), the statement #1 it runs
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
--   f = ActivityFilter(person='', action='', period='', before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT x.* FROM unnest(%(teams)s::uuid[]) AS tm(id)
CROSS JOIN LATERAL (
    SELECT l.id, l.at, l.actor, l.user_id, l.action, l.todo_id, l.endpoint_id, l.queue, l.note, l.detail, l.team_id
    FROM audit_log l
    WHERE l.team_id = tm.id
    ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s
) x
ORDER BY x.at DESC, x.id DESC LIMIT %(limit)s

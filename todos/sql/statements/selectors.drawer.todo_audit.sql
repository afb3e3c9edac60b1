-- selectors.drawer.todo_audit
-- built by todos.core.selectors.drawer.todo_audit(), the statement #1 it runs
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
--   todo = TodoRow(id='td_00000000000000000000000000000001',
--       endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'), queue='default', kind=None,
--       title='A todo', state='failed', owner=None, assignee=None, priority=100, attempt=3,
--       max_attempts=3, attempts_total=3, lease_expires_at=None, next_retry_at=None,
--       blocked=False, created_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), updated_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), claimed_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), completed_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), lease_lapsed=False, concurrency_key=None, requires=[])
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT l.id, l.at, l.actor, l.user_id, l.action, l.todo_id, l.endpoint_id, l.queue, l.note, l.detail, l.team_id
FROM audit_log l
WHERE l.todo_id = %(id)s AND l.team_id = ANY(%(teams)s::uuid[])
ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s

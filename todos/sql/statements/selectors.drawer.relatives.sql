-- selectors.drawer.relatives
-- built by todos.core.selectors.drawer.relatives(), the statement #1 it runs
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

(SELECT 'parent' AS side, t.id, t.title, todo_board_state(t.state, t.next_retry_at) AS state, d.settled
 FROM todo_dependencies d JOIN todos t ON t.id = d.parent_id
 WHERE d.child_id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])
 ORDER BY t.created_at, t.id
 LIMIT %(limit)s)
UNION ALL
(SELECT 'child', t.id, t.title, todo_board_state(t.state, t.next_retry_at), d.settled
 FROM todo_dependencies d JOIN todos t ON t.id = d.child_id
 WHERE d.parent_id = %(id)s AND t.endpoint_id = ANY(%(eps)s::uuid[])
 ORDER BY t.created_at, t.id
 LIMIT %(limit)s)

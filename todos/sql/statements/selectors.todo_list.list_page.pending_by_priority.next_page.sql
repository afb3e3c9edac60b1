-- selectors.todo_list.list_page.pending_by_priority.next_page
-- built by todos.core.selectors.todo_list.list_page(), the statement #2 it runs
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
--       finished_to=None, failed_with='', sort='priority',
--       after=Cursor(created_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), id='td_00000000000000000000000000000002', priority=100),
--       before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH page_keys AS MATERIALIZED (
SELECT x.* FROM unnest(%(eps)s::uuid[], %(queues)s::text[]) AS e(id, queue)
CROSS JOIN LATERAL (
    SELECT t.priority, t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.queue = e.queue AND t.state = 'pending'
      AND t.next_retry_at IS NULL
      AND (t.priority, t.created_at, t.id) > (%(c_priority)s, %(c_created_at)s, %(c_id)s)
      AND (t.priority, t.created_at) >= (%(c_priority)s, %(c_created_at)s)
    ORDER BY t.priority ASC, t.created_at ASC, t.id ASC
    LIMIT %(limit)s
) x
ORDER BY x.priority ASC, x.created_at ASC, x.id ASC
LIMIT %(limit)s)
SELECT t.id, t.endpoint_id, t.queue, t.kind, t.title, t.state,
       t.owner, t.assignee, t.priority, t.attempt, t.max_attempts, t.attempts_total,
       t.lease_expires_at,
       nullif(t.next_retry_at, 'infinity') AS next_retry_at,
       (t.state = 'pending' AND t.next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
       t.created_at, t.updated_at, t.claimed_at, t.completed_at, t.concurrency_key, t.requires,
       (t.state = 'claimed' AND t.lease_expires_at < now()) AS lease_lapsed
FROM page_keys k JOIN todos t ON t.id = k.id
ORDER BY t.priority ASC, t.created_at ASC, t.id ASC

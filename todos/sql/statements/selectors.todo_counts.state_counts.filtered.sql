-- selectors.todo_counts.state_counts.filtered
-- built by todos.core.selectors.todo_counts.state_counts(), the statement #1 it runs
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
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=False, q='',
--       kind='report', priority=PriorityRange(low=5, high=5), created_from=None,
--       created_to=None, finished_from=None, finished_to=None, failed_with='', sort='newest',
--       after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS walked,
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at IS NULL) AS "pending",
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at = 'infinity') AS "blocked",
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at < 'infinity') AS "scheduled",
       count(*) FILTER (WHERE t.state = 'claimed') AS "claimed",
       count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL) AS "retry",
       count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NULL) AS "dead",
       count(*) FILTER (WHERE t.state = 'done') AS "done",
       count(*) FILTER (WHERE t.state = 'canceled') AS "canceled"
FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id, t.state, t.next_retry_at
    FROM todos t
    WHERE t.endpoint_id = e.id
      AND t.kind = %(kind)s
      AND t.priority = %(priority_low)s
      AND t.priority <> 0
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) t

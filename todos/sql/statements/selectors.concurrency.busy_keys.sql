-- selectors.concurrency.busy_keys
-- built by todos.core.selectors.concurrency.busy_keys(), the statement #1 it runs
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

SELECT k.team_id, k.key, k.claimed, k.max_claimed, w.waiting, w.next
FROM concurrency_keys k
CROSS JOIN LATERAL (
    SELECT count(*) AS waiting,
           coalesce(json_agg(json_build_object('id', p.id, 'title', p.title, 'queue', p.queue)
                             ORDER BY p.priority, p.created_at)
                    FILTER (WHERE p.n <= 3), '[]'::json) AS next
    FROM (
        SELECT t.id, t.title, t.queue, t.priority, t.created_at,
               row_number() OVER (ORDER BY t.priority, t.created_at) AS n
        FROM todos t
        WHERE t.concurrency_key = k.key AND t.state = 'pending' AND t.endpoint_id = ANY(%(eps)s::uuid[])
        LIMIT 1001
    ) p
) w
WHERE k.team_id = ANY(%(teams)s::uuid[]) AND k.claimed >= k.max_claimed
ORDER BY w.waiting DESC, k.key
LIMIT 20

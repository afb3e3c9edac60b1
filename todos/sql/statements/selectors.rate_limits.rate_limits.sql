-- selectors.rate_limits.rate_limits
-- built by todos.core.selectors.rate_limits.rate_limits(), the statement #1 it runs
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

SELECT r.team_id, r.key, r.allowance, r.per, r.refills_at, coalesce(r.refills_at > now(), false) AS throttled,
       w.waiting
FROM rate_limits r
CROSS JOIN LATERAL (
    SELECT count(*) AS waiting FROM (
        SELECT 1 FROM todos t JOIN endpoints e ON e.id = t.endpoint_id AND e.team_id = r.team_id
        WHERE t.rate_key = r.key AND t.state = 'pending' AND t.endpoint_id = ANY(%(eps)s::uuid[])
        LIMIT 1001
    ) p
) w
WHERE r.team_id = ANY(%(teams)s::uuid[])
ORDER BY coalesce(r.refills_at > now(), false) AND w.waiting > 0 DESC, r.key
LIMIT 50

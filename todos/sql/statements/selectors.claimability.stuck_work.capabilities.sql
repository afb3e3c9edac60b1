-- selectors.claimability.stuck_work.capabilities
-- built by todos.core.selectors.claimability.stuck_work(), the statement #3 it runs
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

WITH waiting AS (
    SELECT t.endpoint_id, t.queue, t.state, t.next_retry_at, t.requires FROM todos t
    WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.requires <> '{}' AND t.state IN ('pending', 'failed')
      AND (t.state = 'pending' OR t.next_retry_at IS NOT NULL)  -- pending, scheduled, blocked or a retry: not dead
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
)
SELECT w.endpoint_id, w.queue, e.slug, e.team_id, e.scope_queues, e.capabilities,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at IS NULL)::bigint AS pending,
       count(*) FILTER (WHERE w.state = 'failed')::bigint AS retry,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at <> 'infinity')::bigint AS scheduled,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at = 'infinity')::bigint AS blocked,
       (SELECT array_agg(DISTINCT l ORDER BY l) FROM waiting m CROSS JOIN LATERAL unnest(m.requires) l
        WHERE m.endpoint_id = w.endpoint_id AND m.queue = w.queue AND NOT (l = ANY(e.capabilities))) AS missing
FROM waiting w JOIN endpoints e ON e.id = w.endpoint_id
WHERE NOT (w.requires <@ e.capabilities)
GROUP BY w.endpoint_id, w.queue, e.id
ORDER BY e.slug, w.queue

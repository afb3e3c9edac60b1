-- selectors.claimability.stuck_work.assigned
-- built by todos.core.selectors.claimability.stuck_work(), the statement #2 it runs
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

SELECT t.endpoint_id, t.queue, t.assignee, e.slug, e.team_id, e.scope_queues,
       count(*) FILTER (WHERE t.next_retry_at IS NULL)::bigint AS pending,
       count(*) FILTER (WHERE t.next_retry_at <> 'infinity')::bigint AS scheduled,
       count(*) FILTER (WHERE t.next_retry_at = 'infinity')::bigint AS blocked,
       (SELECT o.slug FROM endpoints o WHERE 'endpoint:' || o.id::text = t.assignee) AS assignee_slug
FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
WHERE t.assignee >= 'endpoint:' AND t.assignee < 'endpoint;' AND t.state = 'pending'
  AND t.endpoint_id = ANY(%(eps)s::uuid[])
  AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
  AND t.assignee <> 'endpoint:' || t.endpoint_id::text
GROUP BY t.endpoint_id, t.queue, t.assignee, e.id
ORDER BY e.slug, t.queue, t.assignee

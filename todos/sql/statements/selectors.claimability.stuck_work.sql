-- selectors.claimability.stuck_work
-- built by todos.core.selectors.claimability.stuck_work(), the statement #1 it runs
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

SELECT c.endpoint_id, c.queue, e.slug, e.team_id, e.scope_queues,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0)::bigint AS pending,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'retry'), 0)::bigint AS retry,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'scheduled'), 0)::bigint AS scheduled,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'blocked'), 0)::bigint AS blocked,
       CASE WHEN e.state = 'revoked' THEN 'revoked'
            WHEN e.expires_at <= now() THEN 'expired'
            WHEN NOT (e.scope_verbs && %(claim_verbs)s::text[]) THEN 'no_claim_verb'
            WHEN NOT (c.queue = ANY(e.scope_queues)) THEN 'queue_out_of_scope'
            ELSE 'claims_paused' END AS reason,
       e.claims_paused_by,
       ARRAY(SELECT o.slug FROM endpoints o
             WHERE o.team_id = e.team_id AND o.id <> e.id AND o.state = 'active'
               AND (o.expires_at IS NULL OR o.expires_at > now())
               AND o.scope_verbs && %(claim_verbs)s::text[] AND c.queue = ANY(o.scope_queues)
               AND o.claims_paused_at IS NULL
             ORDER BY o.slug) AS claimers
FROM todo_counts c JOIN endpoints e ON e.id = c.endpoint_id
WHERE c.endpoint_id = ANY(%(eps)s::uuid[]) AND c.state IN ('pending', 'scheduled', 'blocked', 'retry') AND c.n > 0
  AND (%(queue)s::text IS NULL OR c.queue = %(queue)s::text)
  AND (e.state = 'revoked' OR e.expires_at <= now()
       OR NOT (e.scope_verbs && %(claim_verbs)s::text[]) OR NOT (c.queue = ANY(e.scope_queues))
       OR e.claims_paused_at IS NOT NULL)
GROUP BY c.endpoint_id, c.queue, e.id
ORDER BY e.slug, c.queue

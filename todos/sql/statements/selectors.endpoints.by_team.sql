-- selectors.endpoints.by_team
-- built by todos.core.selectors.endpoints.by_team(), the statement #1 it runs
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

SELECT e.id, e.team_id, e.slug, e.name, e.state, e.scope_verbs, e.scope_queues, e.default_lease_ttl_seconds,
       e.expires_at, e.revoked_at, e.last_seen_at, e.credential_prefix, e.created_at, u.username AS created_by,
       e.capabilities, e.claims_paused_at, e.claims_paused_by
FROM endpoints e LEFT JOIN auth_user u ON u.id = e.created_by WHERE e.team_id = ANY(%(teams)s::uuid[])
            ORDER BY e.state = 'revoked', lower(e.name), e.slug

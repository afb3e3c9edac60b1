-- selectors.teams.endpoints
-- built by todos.core.selectors.teams.endpoints(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT e.id, e.slug, e.name, e.state, e.scope_verbs, e.scope_queues, e.default_lease_ttl_seconds,
       e.expires_at, e.last_seen_at, e.credential_prefix, u.username AS created_by, e.created_at
FROM endpoints e LEFT JOIN auth_user u ON u.id = e.created_by
WHERE e.team_id = %s ORDER BY e.name, e.slug

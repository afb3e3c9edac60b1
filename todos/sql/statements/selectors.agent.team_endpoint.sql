-- selectors.agent.team_endpoint
-- built by todos.core.selectors.agent_api.team_endpoint()
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   slug = 'worker'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, team_id, slug, scope_verbs, scope_queues, default_lease_ttl_seconds,
       capabilities,
       state = 'revoked' AS revoked,
       coalesce(expires_at <= now(), false) AS expired,
       extract(epoch FROM expires_at - now())::float8 AS expires_in,
       coalesce(extract(epoch FROM last_seen_at + interval '1 minute' - now())::float8, 0) AS stamp_in FROM endpoints
              WHERE team_id = %(team_id)s AND slug = %(slug)s AND state = 'active'
                AND (expires_at IS NULL OR expires_at > now())

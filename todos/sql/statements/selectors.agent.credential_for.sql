-- selectors.agent.credential_for
-- built by todos.core.selectors.agent_api.credential_for()
-- with:
--   token_digest = b'\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x
--       00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, team_id, slug, scope_verbs, scope_queues, default_lease_ttl_seconds,
       capabilities,
       state = 'revoked' AS revoked,
       coalesce(expires_at <= now(), false) AS expired,
       extract(epoch FROM expires_at - now())::float8 AS expires_in,
       coalesce(extract(epoch FROM last_seen_at + interval '1 minute' - now())::float8, 0) AS stamp_in
FROM endpoints WHERE credential_hash = %(digest)s

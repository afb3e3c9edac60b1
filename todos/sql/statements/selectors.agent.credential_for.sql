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
       last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute' AS needs_touch
FROM endpoints WHERE credential_hash = %(digest)s

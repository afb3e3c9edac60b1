-- store.mcp_sessions.record
-- built by todos.core.store.mcp_sessions.record()
-- with:
--   session_id = '0123456789abcdef0123456789abcdef'
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   digest = b'\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00
--       \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
--   protocol_version = '2025-06-18'
--   client_params = {'clientInfo': {'name': 'c', 'version': '1'}}
-- Generated: edit the code, then run `uv run manage.py render_sql`.

        INSERT INTO mcp_sessions (id, endpoint_id, token_digest, protocol_version, client_params)
        VALUES (%(id)s, %(endpoint)s, %(digest)s, %(version)s, %(params)s::jsonb)
        ON CONFLICT (id) DO UPDATE
            SET protocol_version = EXCLUDED.protocol_version, client_params = EXCLUDED.client_params,
                last_seen_at = now()
            WHERE mcp_sessions.endpoint_id = EXCLUDED.endpoint_id AND mcp_sessions.token_digest = EXCLUDED.token_digest
        RETURNING id

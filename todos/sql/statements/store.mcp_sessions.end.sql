-- store.mcp_sessions.end
-- built by todos.core.store.mcp_sessions.end()
-- with:
--   session_id = '0123456789abcdef0123456789abcdef'
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   digest = b'\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00
--       \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

        DELETE FROM mcp_sessions
        WHERE id = %(id)s AND endpoint_id = %(endpoint)s AND token_digest = %(digest)s
        RETURNING id

-- store.mcp_sessions.lookup
-- built by todos.core.store.mcp_sessions.lookup()
-- with:
--   session_id = '0123456789abcdef0123456789abcdef'
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   digest = b'\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00
--       \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
--   idle_seconds = 1800
-- Generated: edit the code, then run `uv run manage.py render_sql`.

        WITH found AS (
            SELECT id,
                   endpoint_id = %(endpoint)s AND token_digest = %(digest)s AS owned,
                   last_seen_at < now() - make_interval(secs => %(idle)s) AS expired,
                   last_seen_at < now() - make_interval(secs => %(touch)s) AS stale,
                   protocol_version, client_params
            FROM mcp_sessions
            WHERE id = %(id)s
        ), touched AS (
            UPDATE mcp_sessions s SET last_seen_at = now()
            FROM found
            WHERE s.id = found.id AND found.owned AND found.stale AND NOT found.expired
        )
        SELECT id, owned, expired, protocol_version, client_params FROM found

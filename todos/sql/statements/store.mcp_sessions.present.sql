-- store.mcp_sessions.present
-- built by todos.core.store.mcp_sessions.present()
-- with:
--   session_ids = ['0123456789abcdef0123456789abcdef']
--   idle_seconds = 1800
-- Generated: edit the code, then run `uv run manage.py render_sql`.

        SELECT id FROM mcp_sessions
        WHERE id = ANY(%(ids)s) AND last_seen_at >= now() - make_interval(secs => %(idle)s)

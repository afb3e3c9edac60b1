-- store.mcp_sessions.keep_alive
-- built by todos.core.store.mcp_sessions.keep_alive()
-- with:
--   session_ids = ['0123456789abcdef0123456789abcdef']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

UPDATE mcp_sessions SET last_seen_at = now() WHERE id = ANY(%(ids)s) RETURNING id

-- store.mcp_sessions.sweep
-- built by todos.core.store.mcp_sessions.sweep()
-- with:
--   idle_seconds = 1800
-- Generated: edit the code, then run `uv run manage.py render_sql`.

        DELETE FROM mcp_sessions
        WHERE id IN (
            SELECT id FROM mcp_sessions
            WHERE last_seen_at < now() - make_interval(secs => %(idle)s)
            ORDER BY last_seen_at
            LIMIT %(batch)s
            FOR UPDATE SKIP LOCKED
        )
        RETURNING id

-- selectors.access.viewer
-- built by todos.core.selectors.access.viewer_for(), the statement #1 it runs
-- with:
--   user = <User: olive>
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT tm.role, tm.team_id, tt.slug AS team_slug, tt.name AS team_name,
       e.id AS endpoint_id, e.slug, e.name, e.state, e.scope_queues, e.capabilities
FROM team_members tm
JOIN teams tt ON tt.id = tm.team_id
LEFT JOIN endpoints e ON e.team_id = tm.team_id
WHERE tm.user_id = %(user_id)s
ORDER BY tt.name, tt.slug, e.name, e.slug

-- selectors.identities.role_mappings
-- built by todos.core.selectors.identities.role_mappings(), the statement #1 it runs
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT m.id, m.group_value, m.team_id, t.slug AS team_slug, t.name AS team_name, m.role
FROM oidc_role_mappings m JOIN teams t ON t.id = m.team_id
ORDER BY m.group_value, t.slug

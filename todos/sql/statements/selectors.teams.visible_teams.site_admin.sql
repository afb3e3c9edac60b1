-- selectors.teams.visible_teams.site_admin
-- built by todos.core.selectors.teams.visible_teams(), the statement #1 it runs
-- with:
--   viewer = Viewer(user_id=1, username='root', is_superuser=True, teams=(), endpoints=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT t.id, t.slug, t.name, t.created_at,
       (SELECT count(*) FROM team_members m WHERE m.team_id = t.id) AS members,
       (SELECT count(*) FROM endpoints e WHERE e.team_id = t.id) AS endpoints,
       (SELECT role FROM team_members m WHERE m.team_id = t.id AND m.user_id = %(user_id)s) AS role
FROM teams t WHERE TRUE ORDER BY t.name, t.slug

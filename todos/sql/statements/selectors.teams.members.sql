-- selectors.teams.members
-- built by todos.core.selectors.teams.members(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT m.user_id, u.username, m.role, m.created_at AS since
FROM team_members m JOIN auth_user u ON u.id = m.user_id
WHERE m.team_id = %s ORDER BY u.username

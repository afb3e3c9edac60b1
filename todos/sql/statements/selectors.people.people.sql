-- selectors.people.people
-- built by todos.core.selectors.people.people(), the statement #1 it runs
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT u.id, u.username, u.is_superuser, u.is_active, u.last_login, u.date_joined,
       coalesce((SELECT array_agg(t.slug || ':' || m.role ORDER BY t.slug)
                 FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = u.id), '{}') AS teams
FROM auth_user u
ORDER BY u.is_active DESC, u.username
LIMIT %(limit)s

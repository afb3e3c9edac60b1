-- selectors.people.person
-- built by todos.core.selectors.people.person(), the statement #1 it runs
-- with:
--   user_id = 8
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT u.id, u.username, u.is_superuser, u.is_active, u.last_login, u.date_joined,
       coalesce((SELECT array_agg(t.slug || ':' || m.role ORDER BY t.slug)
                 FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = u.id), '{}') AS teams
FROM auth_user u
WHERE u.id = %(id)s

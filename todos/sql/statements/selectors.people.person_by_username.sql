-- selectors.people.person_by_username
-- built by todos.core.selectors.people.person_by_username(), the statement #1 it runs
-- with:
--   username = 'olive'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, username, is_active FROM auth_user WHERE username = %(username)s

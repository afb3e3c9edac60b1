-- selectors.teams.user_id_by_username
-- built by todos.core.selectors.teams.user_id_by_username(), the statement #1 it runs
-- with:
--   username = 'olive'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id FROM auth_user WHERE username = %s AND is_active

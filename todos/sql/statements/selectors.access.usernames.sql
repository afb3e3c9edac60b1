-- selectors.access.usernames
-- built by todos.core.selectors.access.usernames(), the statement #1 it runs
-- with:
--   user_ids = [7, 8]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, username FROM auth_user WHERE id = ANY(%s)

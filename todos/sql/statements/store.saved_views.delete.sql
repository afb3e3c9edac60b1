-- store.saved_views.delete
-- built by todos.core.store.saved_views.delete()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   view_id = 12
-- Generated: edit the code, then run `uv run manage.py render_sql`.

DELETE FROM saved_views WHERE id = %(id)s AND user_id = %(user_id)s RETURNING id

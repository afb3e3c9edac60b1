-- selectors.preferences.time_zone_choice
-- built by todos.core.selectors.preferences.time_zone_choice(), the statement #1 it runs
-- with:
--   user_id = 8
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT time_zone FROM person_preferences WHERE user_id = %(user_id)s

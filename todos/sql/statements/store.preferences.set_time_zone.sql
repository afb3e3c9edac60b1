-- store.preferences.set_time_zone
-- built by todos.core.store.preferences.set_time_zone()
-- with:
--   user_id = 8
--   time_zone = 'Europe/Paris'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

INSERT INTO person_preferences AS p (user_id, time_zone)
SELECT u.id, %(time_zone)s FROM auth_user u WHERE u.id = %(user_id)s AND u.is_active
ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone, updated_at = now()
RETURNING p.time_zone

-- selectors.queue_settings.team_timeouts
-- built by todos.core.selectors.queue_settings.team_timeouts(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT s.queue, s.timeout_seconds FROM queue_settings s WHERE s.team_id = %(team)s ORDER BY s.queue

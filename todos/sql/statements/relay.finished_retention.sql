-- relay.finished_retention
-- the constant todos.live.relay.FINISHED_RETENTION_SQL
-- Generated: edit the code, then run `uv run manage.py render_sql`.

DELETE FROM todo_finished_minutes WHERE minute < now() - interval '8 days'

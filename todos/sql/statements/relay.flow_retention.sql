-- relay.flow_retention
-- the constant todos.live.relay.FLOW_RETENTION_SQL
-- Generated: edit the code, then run `uv run manage.py render_sql`.

DELETE FROM todo_flow
WHERE (grain = 'minute' AND at < now() - interval '1 day') OR (grain = 'hour' AND at < now() - interval '8 days')

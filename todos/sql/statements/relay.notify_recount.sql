-- relay.notify_recount
-- the constant todos.live.relay.NOTIFY_RECOUNT
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(pg_notify('board_events', json_strip_nulls(json_build_object(
            'op', 'recount', 'team', t.id, 'ids', '{}'::text[], 'queues', '{}'::text[],
            'endpoints', '{}'::uuid[], 'user', NULL))::text)) AS sent
FROM teams t

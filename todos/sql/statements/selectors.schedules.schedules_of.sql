-- selectors.schedules.schedules_of
-- built by todos.core.selectors.schedules.schedules_of(), the statement #1 it runs
-- with:
--   team_ids = [UUID('00000000-0000-4000-8000-00000000a001'),
--       UUID('00000000-0000-4000-8000-00000000a002')]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT s.*, tm.slug AS team_slug, tm.name AS team_name, e.slug AS endpoint_slug, e.state AS endpoint_state,
       coalesce((
           SELECT json_agg(json_build_object(
                      'tick', f.tick, 'how', f.how, 'missed', f.missed, 'fired_at', f.fired_at,
                      'todo_id', f.todo_id, 'state', todo_board_state(td.state, td.next_retry_at),
                      'title', td.title) ORDER BY f.fired_at DESC)
           FROM (SELECT * FROM schedule_fires sf WHERE sf.schedule_id = s.id
                 ORDER BY sf.fired_at DESC LIMIT 5) f
           LEFT JOIN todos td ON td.id = f.todo_id), '[]'::json) AS fires
FROM schedules s JOIN teams tm ON tm.id = s.team_id JOIN endpoints e ON e.id = s.endpoint_id
WHERE s.team_id = ANY(%(teams)s::uuid[]) AND (%(id)s::uuid IS NULL OR s.id = %(id)s::uuid)
ORDER BY tm.name, s.name

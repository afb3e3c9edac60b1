-- selectors.schedules.endpoint_schedule
-- built by todos.core.selectors.schedules.endpoint_schedule()
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   schedule_id = UUID('00000000-0000-4000-8000-00000000c001')
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
WHERE s.endpoint_id = %(endpoint_id)s AND s.id = %(id)s
ORDER BY tm.name, s.name

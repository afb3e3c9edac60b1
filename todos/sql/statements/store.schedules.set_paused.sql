-- store.schedules.set_paused
-- built by todos.core.store.schedules.set_paused()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   schedule_id = UUID('00000000-0000-4000-8000-00000000c001')
--   paused = True
--   now = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = %(user_id)s) AS found,
           EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin')) AS acts
    FROM s
),
made AS (
    UPDATE schedules u SET paused = %(paused)s, updated_at = now(),
           next_fire_at = CASE WHEN u.paused AND NOT %(paused)s THEN %(now)s::timestamptz ELSE u.next_fire_at END
    FROM checks c WHERE u.id = %(id)s AND c.found AND c.acts AND u.paused IS DISTINCT FROM %(paused)s
    RETURNING u.*
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT m.team_id, %(user_id)s, %(actor)s, 'schedule.pause', NULL, NULL, NULL, m.name,
           jsonb_build_object('schedule', m.id)
    FROM made m),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT l.team_id, l.endpoint_id, NULL, l.queue, 'schedule', NULL, NULL, NULL, NULL, NULL
    FROM made l)
SELECT coalesce(m.id, s.id) AS id, coalesce(c.found, false) AS found, c.acts,
       (SELECT to_jsonb(x) FROM (SELECT * FROM made) x) AS made, to_jsonb(s) AS was
FROM (SELECT 1) one LEFT JOIN s ON true LEFT JOIN checks c ON true LEFT JOIN made m ON true

-- store.schedules.delete
-- built by todos.core.store.schedules.delete()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   schedule_id = UUID('00000000-0000-4000-8000-00000000c001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = %(user_id)s) AS found,
           EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = s.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin')) AS acts
    FROM s
),
gone AS (
    DELETE FROM schedules d USING checks c WHERE d.id = %(id)s AND c.found AND c.acts
    RETURNING d.id, d.team_id, d.name, d.endpoint_id, d.queue
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT g.team_id, %(user_id)s, %(actor)s, 'schedule.delete', NULL, g.endpoint_id, g.queue, g.name,
           jsonb_build_object('schedule', g.id)
    FROM gone g),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT l.team_id, l.endpoint_id, NULL, l.queue, 'schedule', NULL, NULL, NULL, NULL, NULL
    FROM gone l)
SELECT g.name, coalesce(c.found, false) AS found, c.acts
FROM (SELECT 1) one LEFT JOIN checks c ON true LEFT JOIN gone g ON true

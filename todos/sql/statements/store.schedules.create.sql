-- store.schedules.create
-- built by todos.core.store.schedules.create()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   name = 'Nightly report'
--   cron = '0 3 * * *'
--   timezone = 'Europe/Paris'
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   queue = 'default'
--   title = 'Write the nightly report'
--   kind = 'report'
--   payload = {'scope': 'all'}
--   now = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH checks AS (
    SELECT EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
           AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS found,
           EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin')) AS acts,
           EXISTS (SELECT 1 FROM endpoints oe WHERE oe.id = %(endpoint_id)s
        AND oe.team_id = %(team_id)s AND oe.state = 'active') AS owner_ok,
           EXISTS (SELECT 1 FROM endpoints qe WHERE qe.id = %(endpoint_id)s
        AND %(queue)s = ANY(qe.scope_queues)) AS queue_ok,
           NOT EXISTS (SELECT 1 FROM schedules WHERE team_id = %(team_id)s AND name = %(name)s) AS name_free
),
made AS (
    INSERT INTO schedules (team_id, name, cron, timezone, endpoint_id, queue, title, kind, payload, priority,
                           max_attempts, requires, missed, next_fire_at)
    SELECT %(team_id)s, %(name)s, %(cron)s, %(timezone)s, %(endpoint_id)s, %(queue)s, %(title)s, %(kind)s,
           %(payload)s, %(priority)s, %(max_attempts)s, %(requires)s, %(missed)s, %(next_fire_at)s
    FROM checks c WHERE c.found AND c.acts AND c.owner_ok AND c.queue_ok AND c.name_free
    ON CONFLICT (team_id, name) DO NOTHING
    RETURNING *
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT m.team_id, %(user_id)s, %(actor)s, 'schedule.create', NULL, m.endpoint_id, m.queue, m.name,
           jsonb_build_object('schedule', m.id, 'cron', m.cron, 'timezone', m.timezone)
    FROM made m),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT l.team_id, l.endpoint_id, NULL, l.queue, 'schedule', NULL, NULL, NULL, NULL, NULL
    FROM made l)
SELECT m.*, c.* FROM checks c LEFT JOIN made m ON true

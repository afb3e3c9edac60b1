-- store.schedules.update.by_agent
-- built by todos.core.store.schedules.update()
-- with:
--   op = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   schedule_id = UUID('00000000-0000-4000-8000-00000000c001')
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

WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR UPDATE),
checks AS (
    SELECT s.team_id,
           s.endpoint_id = %(agent_endpoint)s AS found,
           TRUE AS acts,
           EXISTS (SELECT 1 FROM endpoints oe WHERE oe.id = %(endpoint_id)s AND oe.team_id = s.team_id
                   AND oe.state = 'active') AS owner_ok,
           EXISTS (SELECT 1 FROM endpoints qe WHERE qe.id = %(endpoint_id)s
        AND %(queue)s = ANY(qe.scope_queues)) AS queue_ok,
           NOT EXISTS (SELECT 1 FROM schedules o WHERE o.team_id = s.team_id AND o.name = %(name)s
                       AND o.id <> s.id) AS name_free
    FROM s
),
made AS (
    UPDATE schedules u SET name = %(name)s, cron = %(cron)s, timezone = %(timezone)s,
           endpoint_id = %(endpoint_id)s, queue = %(queue)s, title = %(title)s, kind = %(kind)s,
           payload = %(payload)s, priority = %(priority)s, max_attempts = %(max_attempts)s,
           requires = %(requires)s, missed = %(missed)s, next_fire_at = %(next_fire_at)s, updated_at = now()
    FROM checks c WHERE u.id = %(id)s AND c.found AND c.acts AND c.owner_ok AND c.queue_ok AND c.name_free
    RETURNING u.*
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT m.team_id, %(user_id)s, %(actor)s, 'schedule.edit', NULL, m.endpoint_id, m.queue, m.name,
           coalesce((
        SELECT jsonb_object_agg(n.key, jsonb_build_object('old', o.value, 'new', n.value))
        FROM jsonb_each(to_jsonb(m) - 'updated_at' - 'next_fire_at') n
        JOIN jsonb_each(to_jsonb(s) - 'updated_at' - 'next_fire_at') o ON o.key = n.key
        WHERE o.value IS DISTINCT FROM n.value), '{}'::jsonb) || jsonb_build_object('schedule', m.id)
    FROM made m JOIN s ON s.id = m.id),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT l.team_id, l.endpoint_id, NULL, l.queue, 'schedule', NULL, NULL, NULL, NULL, NULL
    FROM made l)
SELECT m.*, coalesce(c.found, false) AS found, c.acts, c.owner_ok, c.queue_ok, c.name_free
FROM (SELECT 1) one LEFT JOIN checks c ON true LEFT JOIN made m ON true

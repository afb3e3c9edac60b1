-- store.schedules.fire_now.by_agent
-- built by todos.core.store.schedules.fire_now()
-- with:
--   op = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   schedule_id = UUID('00000000-0000-4000-8000-00000000c001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH s AS (SELECT * FROM schedules WHERE id = %(id)s FOR KEY SHARE),
checks AS (
    SELECT s.id,
           s.endpoint_id = %(agent_endpoint)s AS found,
           TRUE AS acts,
           EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.endpoint_id AND e.state = 'active') AS owner_ok
    FROM s
),
manual AS (
    SELECT c.id AS schedule_id, clock_timestamp() AS tick, 'manual'::text AS how, 0 AS missed
    FROM checks c WHERE c.found AND c.acts
),
fired AS (
    INSERT INTO schedule_fires (schedule_id, tick, todo_id, how, missed)
    SELECT f.schedule_id, f.tick, 'td_' || replace(gen_random_uuid()::text, '-', ''), f.how, f.missed
    FROM manual f JOIN schedules s ON s.id = f.schedule_id
    JOIN endpoints e ON e.id = s.endpoint_id AND e.state = 'active'
    ON CONFLICT (schedule_id, tick) DO NOTHING
    RETURNING schedule_id, tick, todo_id, how
),
ins AS (
    INSERT INTO todos (id, endpoint_id, queue, source, kind, title, payload, idempotency_key, priority, max_attempts,
                       requires)
    SELECT f.todo_id, s.endpoint_id, s.queue, 'schedule', s.kind, s.title, s.payload, 'schedule:' || s.id || ':'
        || to_char(f.tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           s.priority, s.max_attempts, s.requires
    FROM fired f JOIN schedules s ON s.id = f.schedule_id
    ON CONFLICT (endpoint_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL AND state <> 'done' AND (state <> 'failed' OR next_retry_at IS NOT NULL)
    DO NOTHING
    RETURNING *
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'create',
           NULL,
           todo_board_state(r.state, r.next_retry_at),
           NULL,
           NULL,
           NULL
    FROM ins r JOIN endpoints le ON le.id = r.endpoint_id),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, %(user_id)s, %(actor)s, 'schedule.fire', f.todo_id, s.endpoint_id, s.queue, s.name,
           jsonb_build_object('schedule', s.id)
    FROM fired f JOIN schedules s ON s.id = f.schedule_id)
SELECT f.schedule_id, f.tick, i.id AS todo_id, f.how,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM ins WHERE TRUE
                      GROUP BY 1, 2) w) AS notified,
       (SELECT found FROM checks) AS found, (SELECT acts FROM checks) AS acts,
       (SELECT owner_ok FROM checks) AS owner_ok, (SELECT to_jsonb(s) FROM s) AS schedule
FROM (SELECT 1) one LEFT JOIN (fired f LEFT JOIN ins i ON i.id = f.todo_id) ON true

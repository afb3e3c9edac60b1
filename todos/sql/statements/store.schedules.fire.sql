-- store.schedules.fire
-- built by todos.core.store.schedules.fire()
-- with:
--   ids = [UUID('00000000-0000-4000-8000-00000000c001')]
--   next_fire_at = [datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)]
--   ticks = [(UUID('00000000-0000-4000-8000-00000000c001'), datetime.datetime(2026, 1, 1, 12,
--       0, tzinfo=datetime.timezone.utc), 'tick', 0)]
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH moved AS (
    UPDATE schedules s SET next_fire_at = m.next_fire_at
    FROM unnest(%(ids)s::uuid[], %(nexts)s::timestamptz[]) AS m(id, next_fire_at)
    WHERE s.id = m.id
    RETURNING s.id
),
due AS (
    SELECT * FROM unnest(%(fire_ids)s::uuid[], %(ticks)s::timestamptz[], %(hows)s::text[], %(misses)s::int[])
        AS d(schedule_id, tick, how, missed)
),
fired AS (
    INSERT INTO schedule_fires (schedule_id, tick, todo_id, how, missed)
    SELECT f.schedule_id, f.tick, 'td_' || replace(gen_random_uuid()::text, '-', ''), f.how, f.missed
    FROM due f JOIN schedules s ON s.id = f.schedule_id
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
    FROM ins r JOIN endpoints le ON le.id = r.endpoint_id)
SELECT f.schedule_id, f.tick, i.id AS todo_id, f.how,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM ins WHERE TRUE
                      GROUP BY 1, 2) w) AS notified
FROM fired f LEFT JOIN ins i ON i.id = f.todo_id

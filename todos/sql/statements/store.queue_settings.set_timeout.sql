-- store.queue_settings.set_timeout
-- built by todos.core.store.queue_settings.set_timeout()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   queue = 'default'
--   timeout_seconds = 300
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH before AS (
    SELECT s.timeout_seconds FROM queue_settings s WHERE s.team_id = %(team_id)s AND s.queue = %(queue)s
),
may AS (
    SELECT %(team_id)s::uuid AS team_id, %(queue)s::text AS queue
    WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin')) AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
),
upserted AS (
    INSERT INTO queue_settings AS s (team_id, queue, timeout_seconds, updated_by)
    SELECT m.team_id, m.queue, %(seconds)s::integer, %(user_id)s FROM may m
    WHERE %(seconds)s::integer IS NOT NULL
    ON CONFLICT (team_id, queue) DO UPDATE
        SET timeout_seconds = excluded.timeout_seconds, updated_at = now(), updated_by = excluded.updated_by
    RETURNING s.team_id, s.queue
),
cleared AS (
    DELETE FROM queue_settings s USING may m
    WHERE %(seconds)s::integer IS NULL AND s.team_id = m.team_id AND s.queue = m.queue
    RETURNING s.team_id, s.queue
),
changed AS (SELECT m.team_id, m.queue FROM may m),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(user_id)s, %(actor)s, 'queue.timeout', NULL, NULL, c.queue, NULL,
           jsonb_build_object('queue', c.queue, 'old', (SELECT timeout_seconds FROM before),
                                         'new', %(seconds)s::integer)
    FROM changed c),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, c.queue, 'queue_setting', NULL, NULL, NULL, NULL, NULL
    FROM changed c)
SELECT c.team_id, c.queue, (SELECT timeout_seconds FROM before) AS previous,
       (SELECT count(*) FROM upserted) + (SELECT count(*) FROM cleared) AS written,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS sees
FROM (SELECT 1) one LEFT JOIN changed c ON true

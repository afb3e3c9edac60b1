-- store.concurrency.set_limit.by_command
-- built by todos.core.store.concurrency.set_limit()
-- with:
--   op = None
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   key = 'deploy:prod'
--   limit = 2
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH before AS (
    SELECT k.max_claimed FROM concurrency_keys k WHERE k.team_id = %(team_id)s AND k.key = %(key)s
),
changed AS (
    INSERT INTO concurrency_keys AS k (team_id, key, max_claimed)
    SELECT %(team_id)s, %(key)s, %(limit)s
    WHERE TRUE AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (team_id, key) DO UPDATE SET max_claimed = excluded.max_claimed, updated_at = now()
    RETURNING k.team_id, k.key, k.max_claimed, k.claimed
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(user_id)s, %(actor)s, 'concurrency.limit', NULL, NULL, NULL, c.key,
           jsonb_build_object('key', c.key, 'old', (SELECT max_claimed FROM before), 'new', c.max_claimed)
    FROM changed c),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, NULL, 'concurrency', NULL, NULL, NULL, NULL, NULL
    FROM changed c),
woken AS (
    SELECT DISTINCT t.endpoint_id, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.concurrency_key = %(key)s AND t.state = 'pending' AND e.team_id = %(team_id)s
      AND EXISTS (SELECT 1 FROM changed)
)
SELECT c.*, (SELECT max_claimed FROM before) AS previous,
       EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS sees,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue)::text))
        FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true

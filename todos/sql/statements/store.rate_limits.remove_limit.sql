-- store.rate_limits.remove_limit
-- built by todos.core.store.rate_limits.remove_limit()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   key = 'crawl:upstream'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH changed AS (
    DELETE FROM rate_limits r
    WHERE r.team_id = %(team_id)s AND r.key = %(key)s
      AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin'))
    RETURNING r.team_id, r.key, r.allowance, r.per, r.refills_at
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(user_id)s, %(actor)s, 'rate.remove', NULL, NULL, NULL, c.key,
           jsonb_build_object('key', c.key, 'old', c.allowance || ' per ' || c.per)
    FROM changed c),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, NULL, 'rate', NULL, NULL, NULL, NULL, NULL
    FROM changed c),
woken AS (SELECT DISTINCT t.endpoint_id, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.rate_key = %(key)s AND t.state = 'pending' AND e.team_id = %(team_id)s
      AND EXISTS (SELECT 1 FROM changed))
SELECT c.*, NULL::text AS previous,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS sees,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin')) AS acts,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue)::text)) FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true

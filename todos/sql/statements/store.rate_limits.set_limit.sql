-- store.rate_limits.set_limit
-- built by todos.core.store.rate_limits.set_limit()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   key = 'crawl:upstream'
--   allowance = 60
--   per = 'minute'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH before AS (
    SELECT r.allowance || ' per ' || r.per AS limit_text FROM rate_limits r
    WHERE r.team_id = %(team_id)s AND r.key = %(key)s
),
changed AS (
    INSERT INTO rate_limits AS r (team_id, key, allowance, per, taken)
    SELECT %(team_id)s, %(key)s, %(allowance)s, %(per)s,
           array_fill(NULL::timestamptz, ARRAY[%(allowance)s::int])
    WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin')) AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (team_id, key) DO UPDATE SET
        allowance = excluded.allowance,
        per = excluded.per,
        taken = rate_ring_resized(r.taken, r.next, excluded.allowance),
        next = 1,
        refills_at = (rate_ring_resized(r.taken, r.next, excluded.allowance))[1] + rate_period(excluded.per),
        updated_at = now()
    RETURNING r.team_id, r.key, r.allowance, r.per, r.refills_at
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(user_id)s, %(actor)s, 'rate.limit', NULL, NULL, NULL, c.key,
           jsonb_build_object('key', c.key, 'old', (SELECT limit_text FROM before),
                              'new', c.allowance || ' per ' || c.per)
    FROM changed c),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, NULL, 'rate', NULL, NULL, NULL, NULL, NULL
    FROM changed c),
woken AS (SELECT DISTINCT t.endpoint_id, t.queue FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
    WHERE t.rate_key = %(key)s AND t.state = 'pending' AND e.team_id = %(team_id)s
      AND EXISTS (SELECT 1 FROM changed))
SELECT c.*, (SELECT limit_text FROM before) AS previous,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS sees,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', w.endpoint_id, 'queue', w.queue)::text)) FROM woken w) AS notified
FROM (SELECT 1) one LEFT JOIN changed c ON true

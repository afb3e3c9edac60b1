-- store.human.resume_queue
-- built by todos.core.store.human.resume_queue()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   queue = 'default'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH changed AS (DELETE FROM queue_pauses
            WHERE team_id = %(team_id)s AND queue = %(queue)s
              AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin'))
            RETURNING team_id, queue),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT team_id, %(user_id)s, %(actor)s, 'queue.resume', NULL, NULL, queue, %(note)s,
           NULL
    FROM changed),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, c.queue, 'resume', NULL, NULL, NULL, NULL, NULL
    FROM changed c)
SELECT (SELECT count(*) FROM changed) AS changed,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS sees,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('operator', 'admin')) AS acts,
       (SELECT count(pg_notify('board_ready',
                    json_build_object('endpoint', e.id, 'queue', c.queue)::text))
             FROM changed c JOIN endpoints e ON e.team_id = c.team_id AND c.queue = ANY(e.scope_queues)) AS notified

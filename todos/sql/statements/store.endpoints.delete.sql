-- store.endpoints.delete
-- built by todos.core.store.endpoints.delete()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH gone AS (
    DELETE FROM endpoints e
    WHERE e.id = %(endpoint_id)s AND e.state = 'revoked'
      AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('admin'))
    RETURNING e.id, e.team_id, e.slug
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, %(user_id)s, %(actor)s, 'endpoint.delete', NULL, s.id, NULL, %(note)s,
           jsonb_build_object('slug', s.slug)
    FROM gone s),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'endpoint', NULL, NULL, NULL, NULL, NULL
    FROM gone n)
SELECT (SELECT count(*) FROM gone) AS deleted,
       EXISTS (SELECT 1 FROM endpoints e WHERE e.id = %(endpoint_id)s
           AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s)) AS member,
       EXISTS (SELECT 1 FROM endpoints e WHERE e.id = %(endpoint_id)s
           AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('admin'))) AS admin,
       (SELECT count(pg_notify('board_credentials', json_build_object('endpoints', c.ids)::text))
        FROM (SELECT CASE WHEN count(*) <= 100 THEN array_agg(n.id) END AS ids
              FROM gone n HAVING count(*) > 0) c) AS forgotten

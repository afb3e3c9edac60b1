-- store.endpoints.set_default_lease
-- built by todos.core.store.endpoints.set_default_lease()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   seconds = 600
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH before AS (SELECT e.* FROM endpoints e WHERE e.id = %(endpoint_id)s),
upd AS (
    UPDATE endpoints e SET default_lease_ttl_seconds = %(lease)s
    FROM before b
    WHERE e.id = b.id AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('admin'))
      AND e.state = 'active'
    RETURNING e.*
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, %(user_id)s, %(actor)s, 'endpoint.lease', NULL, s.id, NULL, %(note)s,
           jsonb_build_object('from', b.default_lease_ttl_seconds, 'to', s.default_lease_ttl_seconds)
    FROM upd s JOIN before b ON b.id = s.id),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'endpoint', NULL, NULL, NULL, NULL, NULL
    FROM upd n)
SELECT u.*,
       (SELECT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s)
        FROM before e) AS member,
       (SELECT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = e.team_id AND m.user_id = %(user_id)s
          AND m.role IN ('admin'))
        FROM before e) AS admin,
       (SELECT e.state FROM before e) AS state_before,
       (SELECT count(pg_notify('board_credentials', json_build_object('endpoints', c.ids)::text))
        FROM (SELECT CASE WHEN count(*) <= 100 THEN array_agg(n.id) END AS ids
              FROM upd n HAVING count(*) > 0) c) AS forgotten,
       0 AS also
FROM (SELECT 1) one LEFT JOIN upd u ON true

-- store.teams.remove_member
-- built by todos.core.store.teams.remove_member()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   user_id = 8
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH gone AS (
    DELETE FROM team_members
    WHERE team_id = %(team_id)s AND user_id = %(user_id)s
      AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(by_id)s
          AND m.role IN ('admin'))
    RETURNING team_id, user_id, role
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT g.team_id, %(by_id)s, %(actor)s, 'member.remove', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = g.user_id), 'role', g.role)
    FROM gone g),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT g.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, g.user_id, NULL, NULL
    FROM gone g)
SELECT (SELECT count(*) FROM gone) AS removed,
       EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       (EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(by_id)s
          AND m.role IN ('admin'))) AS may

-- store.teams.set_member.site_admin
-- built by todos.core.store.teams.set_member()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   user_id = 8
--   role = 'viewer'
--   superuser = True
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH before AS (SELECT role FROM team_members WHERE team_id = %(team_id)s AND user_id = %(user_id)s),
up AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT %(team_id)s, %(user_id)s, %(role)s
    WHERE TRUE AND EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active)
      AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (team_id, user_id) DO UPDATE SET role = EXCLUDED.role
    RETURNING team_id, user_id, role
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT up.team_id, %(by_id)s, %(actor)s, 'member.set', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = up.user_id),
                              'from', (SELECT role FROM before), 'to', up.role)
    FROM up),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT up.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, up.user_id, NULL, NULL
    FROM up)
SELECT (SELECT count(*) FROM up) AS changed, (SELECT role FROM before) AS before,
       EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       (TRUE) AS may,
       EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active) AS user_exists

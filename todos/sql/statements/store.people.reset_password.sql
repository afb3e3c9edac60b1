-- store.people.reset_password
-- built by todos.core.store.people.reset_password()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   user_id = 8
--   password = 'fixed-for-the-catalog'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ch AS (
    -- guard: an active person who signs in with a password (a site admin always does)
    UPDATE auth_user SET password = %(password)s
    WHERE id = %(user_id)s AND is_active AND (is_superuser OR %(passwords_on)s)
    RETURNING id, username, is_superuser, is_active
),
site AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT NULL, %(by_id)s, %(actor)s, 'person.password_reset', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username)
    FROM ch),
teams AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT tm.team_id, %(by_id)s, %(actor)s, 'person.password_reset', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username)
    FROM ch JOIN team_members tm ON tm.user_id = ch.id)
SELECT ch.*, true AS existed FROM ch
UNION ALL
SELECT NULL, u.username, u.is_superuser, u.is_active, u.id IS NOT NULL
FROM (SELECT 1) one LEFT JOIN auth_user u ON u.id = %(user_id)s
WHERE NOT EXISTS (SELECT 1 FROM ch)

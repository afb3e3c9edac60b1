-- store.people.set_active.deactivate
-- built by todos.core.store.people.set_active()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   user_id = 8
--   active = False
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ch AS (
    -- guard: the person exists and is not already in the state asked for
    UPDATE auth_user SET is_active = %(active)s
    WHERE id = %(user_id)s AND is_active <> %(active)s
    RETURNING id, username, is_superuser, is_active
),
site AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT NULL, %(by_id)s, %(actor)s, 'person.deactivate', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username)
    FROM ch),
teams AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT tm.team_id, %(by_id)s, %(actor)s, 'person.deactivate', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username)
    FROM ch JOIN team_members tm ON tm.user_id = ch.id),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT tm.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, ch.id, NULL, NULL
    FROM ch JOIN team_members tm ON tm.user_id = ch.id)
SELECT ch.*, true AS existed FROM ch
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s)
WHERE NOT EXISTS (SELECT 1 FROM ch)

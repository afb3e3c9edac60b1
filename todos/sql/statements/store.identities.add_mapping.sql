-- store.identities.add_mapping
-- built by todos.core.store.identities.add_mapping()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   group_value = 'ops'
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   role = 'operator'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ins AS (
    -- guard: the team exists and the group does not map to it yet
    INSERT INTO oidc_role_mappings (group_value, team_id, role)
    SELECT %(group)s, %(team_id)s, %(role)s WHERE EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
    ON CONFLICT (group_value, team_id) DO NOTHING
    RETURNING id, group_value, team_id, role
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(by_id)s, %(actor)s, 'sign_in.mapping_add', NULL, NULL, NULL, NULL,
           jsonb_build_object('group', c.group_value, 'role', c.role,
                              'team', (SELECT slug FROM teams WHERE id = c.team_id))
    FROM ins c)
SELECT ins.*, true AS team_exists FROM ins
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
WHERE NOT EXISTS (SELECT 1 FROM ins)

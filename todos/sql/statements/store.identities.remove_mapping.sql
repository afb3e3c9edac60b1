-- store.identities.remove_mapping
-- built by todos.core.store.identities.remove_mapping()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   mapping_id = 3
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH gone AS (
    -- guard: the mapping exists
    DELETE FROM oidc_role_mappings WHERE id = %(id)s RETURNING id, group_value, team_id, role
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(by_id)s, %(actor)s, 'sign_in.mapping_remove', NULL, NULL, NULL, NULL,
           jsonb_build_object('group', c.group_value, 'role', c.role,
                              'team', (SELECT slug FROM teams WHERE id = c.team_id))
    FROM gone c)
SELECT * FROM gone

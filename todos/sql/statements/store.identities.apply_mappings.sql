-- store.identities.apply_mappings
-- built by todos.core.store.identities.apply_mappings()
-- with:
--   user_id = 8
--   groups = ['ops', 'devs']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH wanted AS (
    SELECT m.team_id,
           (array_agg(m.role ORDER BY array_position(ARRAY['viewer', 'operator', 'admin'], m.role) DESC))[1] AS role
    FROM oidc_role_mappings m
    WHERE m.group_value = ANY(%(groups)s::text[])
    GROUP BY m.team_id
),
current AS (
    SELECT tm.team_id, tm.role, EXISTS (
        SELECT 1 FROM oidc_memberships o WHERE o.team_id = tm.team_id AND o.user_id = tm.user_id
    ) AS mapped
    FROM team_members tm WHERE tm.user_id = %(user_id)s
),
added AS (
    -- guard: an active person, a team they are not in yet
    INSERT INTO team_members (team_id, user_id, role)
    SELECT w.team_id, %(user_id)s, w.role FROM wanted w
    WHERE NOT EXISTS (SELECT 1 FROM current c WHERE c.team_id = w.team_id)
      AND EXISTS (SELECT 1 FROM auth_user WHERE id = %(user_id)s AND is_active)
    ON CONFLICT (team_id, user_id) DO NOTHING
    RETURNING team_id, user_id, role
),
owned AS (
    INSERT INTO oidc_memberships (team_id, user_id) SELECT team_id, user_id FROM added
    ON CONFLICT DO NOTHING
),
changed AS (
    -- guard: a membership the mappings own whose role the groups changed
    UPDATE team_members tm SET role = w.role
    FROM wanted w, current c
    WHERE tm.user_id = %(user_id)s AND tm.team_id = w.team_id AND c.team_id = w.team_id
      AND c.mapped AND c.role <> w.role
    RETURNING tm.team_id, tm.user_id, tm.role, c.role AS before
),
removed AS (
    -- guard: a membership the mappings own that no group grants any more
    DELETE FROM team_members tm
    USING current c
    WHERE tm.user_id = %(user_id)s AND tm.team_id = c.team_id AND c.mapped
      AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.team_id = c.team_id)
    RETURNING tm.team_id, tm.user_id, tm.role
),
set_rows AS (
    SELECT team_id, user_id, role, NULL::text AS before FROM added
    UNION ALL
    SELECT team_id, user_id, role, before FROM changed
),
set_audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, NULL, %(actor)s, 'member.set', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = s.user_id),
                              'from', s.before, 'to', s.role, 'via', 'single sign-on')
    FROM set_rows s),
remove_audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT g.team_id, NULL, %(actor)s, 'member.remove', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', (SELECT username FROM auth_user WHERE id = g.user_id),
                              'role', g.role, 'via', 'single sign-on')
    FROM removed g),
logged_set AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT s.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, s.user_id, NULL, NULL
    FROM set_rows s),
logged_removed AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT g.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, g.user_id, NULL, NULL
    FROM removed g)
SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM changed) AS changed,
       (SELECT count(*) FROM removed) AS removed

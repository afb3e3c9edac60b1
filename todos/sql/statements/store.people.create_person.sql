-- store.people.create_person
-- built by todos.core.store.people.create_person()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   username = 'pat'
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   role = 'operator'
--   password = 'fixed-for-the-catalog'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ins AS (
    -- a person, unless the username is taken or the named team does not exist
    INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,
                           is_active, date_joined)
    SELECT %(password)s, %(superuser)s, %(username)s, '', '', '', %(superuser)s, true, now()
    WHERE %(team_id)s::uuid IS NULL OR EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s::uuid)
    ON CONFLICT (username) DO NOTHING
    RETURNING id, username, is_superuser, is_active
),
joined AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT %(team_id)s::uuid, ins.id, %(role)s FROM ins WHERE %(team_id)s::uuid IS NOT NULL
    RETURNING team_id, user_id, role
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT NULL, %(by_id)s, %(actor)s, 'person.create', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username, 'site_admin', ch.is_superuser)
    FROM ins ch),
member_audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT j.team_id, %(by_id)s, %(actor)s, 'member.set', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', %(username)s::text, 'from', NULL, 'to', j.role)
    FROM joined j),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT j.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, j.user_id, NULL, NULL
    FROM joined j)
SELECT ins.*, NULL AS taken FROM ins
UNION ALL
SELECT NULL, NULL, NULL, NULL, EXISTS (SELECT 1 FROM auth_user WHERE username = %(username)s)
WHERE NOT EXISTS (SELECT 1 FROM ins)

-- store.teams.create_team
-- built by todos.core.store.teams.create_team()
-- with:
--   slug = 'team-a'
--   name = 'Alpha'
--   by = OperatorScope(user_id=7, username='olive')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ins AS (
    INSERT INTO teams (slug, name) VALUES (%(slug)s, %(name)s)
    ON CONFLICT (slug) DO NOTHING RETURNING *
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT id, %(user_id)s, %(actor)s, 'team.create', NULL, NULL, NULL, NULL,
           jsonb_build_object('slug', slug)
    FROM ins),
creator AS (
    INSERT INTO team_members (team_id, user_id, role)
    SELECT ins.id, %(user_id)s, 'admin' FROM ins WHERE %(user_id)s::integer IS NOT NULL
    RETURNING team_id, user_id, role
),
creator_audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT c.team_id, %(user_id)s, %(actor)s, 'member.set', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', %(actor)s::text, 'from', NULL, 'to', c.role)
    FROM creator c),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT c.team_id, NULL, NULL, NULL, 'membership', NULL, NULL, c.user_id, NULL, NULL
    FROM creator c)
SELECT * FROM ins

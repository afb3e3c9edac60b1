-- store.teams.create_team
-- built by todos.store.teams.create_team()
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
    SELECT id, %(user_id)s, %(actor)s, 'team.create', NULL, NULL, NULL, NULL, jsonb_build_object('slug', slug)
    FROM ins)
SELECT * FROM ins

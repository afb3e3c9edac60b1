-- selectors.teams.team_for
-- built by todos.core.selectors.teams.team_for(), the statement #1 it runs
-- with:
--   viewer = Viewer(user_id=1, username='root', is_superuser=True, teams=(), endpoints=())
--   slug = 'team-c'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, slug, name FROM teams WHERE slug = %s

-- selectors.people.recent_changes
-- built by todos.core.selectors.people.recent_changes(), the statement #1 it runs
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT l.at, l.actor, l.action, l.detail->>'user' AS person
FROM audit_log l WHERE l.team_id IS NULL
ORDER BY l.at DESC, l.id DESC LIMIT %(limit)s

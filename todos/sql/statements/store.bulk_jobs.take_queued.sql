-- store.bulk_jobs.take_queued
-- built by todos.core.store.bulk_jobs.take_queued()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, user_id, username, action, scope, filter, group_reason, selected_ids, team_ids
FROM bulk_jobs WHERE state = 'queued'
ORDER BY created_at
LIMIT 1
FOR UPDATE SKIP LOCKED

-- store.bulk_jobs.take_chunk
-- built by todos.core.store.bulk_jobs.take_chunk()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT c.job_id, c.seq, c.todo_ids, j.action, j.user_id, j.username, j.note
FROM bulk_job_chunks c JOIN bulk_jobs j ON j.id = c.job_id
WHERE c.done_at IS NULL AND j.state = 'running'
ORDER BY j.created_at, c.job_id, c.seq
LIMIT 1
FOR UPDATE OF c SKIP LOCKED

-- store.bulk_jobs.stop
-- built by todos.core.store.bulk_jobs.stop()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   job_id = UUID('00000000-0000-4000-8000-00000000b001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

UPDATE bulk_jobs SET state = 'canceled', finished_at = now()
WHERE id = %(id)s AND user_id = %(user_id)s AND state IN ('queued', 'running')
RETURNING id

-- store.bulk_jobs.fail
-- built by todos.core.store.bulk_jobs.fail()
-- with:
--   job_id = UUID('00000000-0000-4000-8000-00000000b001')
--   error = 'the filter no longer parses'
--   worker = 'host:1'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

UPDATE bulk_jobs SET state = 'failed', error = %(error)s, finished_at = now(), worker = %(worker)s, heartbeat_at = now()
WHERE id = %(id)s AND state IN ('queued', 'running')
RETURNING id

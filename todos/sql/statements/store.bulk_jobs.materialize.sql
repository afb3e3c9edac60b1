-- store.bulk_jobs.materialize
-- built by todos.core.store.bulk_jobs.materialize()
-- with:
--   job_id = UUID('00000000-0000-4000-8000-00000000b001')
--   worker = 'host:1'
--   ids = ['td_00000000000000000000000000000001', 'td_00000000000000000000000000000002']
--   truncated = False
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH job AS (
    UPDATE bulk_jobs SET
        state = CASE WHEN cardinality(%(ids)s::text[]) = 0 THEN 'done' ELSE 'running' END,
        total = cardinality(%(ids)s::text[]), truncated = %(truncated)s,
        started_at = now(), finished_at = CASE WHEN cardinality(%(ids)s::text[]) = 0 THEN now() END,
        worker = %(worker)s, heartbeat_at = now()
    WHERE id = %(id)s AND state = 'queued'
    RETURNING id
),
chunks AS (
    INSERT INTO bulk_job_chunks (job_id, seq, todo_ids)
    SELECT job.id, (u.ord - 1) / %(chunk)s, array_agg(u.todo_id ORDER BY u.ord)
    FROM job CROSS JOIN unnest(%(ids)s::text[]) WITH ORDINALITY AS u(todo_id, ord)
    GROUP BY job.id, (u.ord - 1) / %(chunk)s
)
SELECT count(*) AS n FROM job

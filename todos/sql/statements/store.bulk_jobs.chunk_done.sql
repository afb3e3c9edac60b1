-- store.bulk_jobs.chunk_done
-- built by todos.core.store.bulk_jobs.chunk_done()
-- with:
--   chunk = Chunk(job_id=UUID('00000000-0000-4000-8000-00000000b001'), seq=0,
--       todo_ids=('td_00000000000000000000000000000001',
--       'td_00000000000000000000000000000002'), action='retry', user_id=7, username='olive',
--       note=None)
--   outcome = BulkOutcome(changed=('td_00000000000000000000000000000001',),
--       skipped=('td_00000000000000000000000000000002',))
--   worker = 'host:1'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH chunk AS (
    UPDATE bulk_job_chunks SET done_at = now(), worker = %(worker)s, changed = %(changed)s, skipped = %(skipped)s
    WHERE job_id = %(job_id)s AND seq = %(seq)s AND done_at IS NULL
    RETURNING job_id, cardinality(todo_ids) AS n
),
sample AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.todo_id, 'state', t.state) ORDER BY s.ord), '[]'::jsonb)
             AS items
    FROM unnest(%(sample)s::text[]) WITH ORDINALITY AS s(todo_id, ord) LEFT JOIN todos t ON t.id = s.todo_id
)
UPDATE bulk_jobs j SET
    processed = j.processed + c.n,
    changed = j.changed + %(changed)s,
    skipped = j.skipped + %(skipped)s,
    skipped_sample = CASE WHEN jsonb_array_length(j.skipped_sample) >= 20 THEN j.skipped_sample ELSE (
        SELECT coalesce(jsonb_agg(e.item ORDER BY e.ord), '[]'::jsonb)
        FROM jsonb_array_elements(j.skipped_sample || s.items) WITH ORDINALITY AS e(item, ord)
        WHERE e.ord <= 20) END,
    worker = %(worker)s, heartbeat_at = now(),
    state = CASE WHEN j.state = 'running' AND j.processed + c.n >= j.total THEN 'done' ELSE j.state END,
    finished_at = CASE WHEN j.state = 'running' AND j.processed + c.n >= j.total THEN now() ELSE j.finished_at END
FROM chunk c, sample s
WHERE j.id = c.job_id
RETURNING j.state

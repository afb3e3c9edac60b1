-- store.bulk_jobs.purge_finished
-- built by todos.core.store.bulk_jobs.purge_finished()
-- with:
--   keep_days = 7
-- Generated: edit the code, then run `uv run manage.py render_sql`.

DELETE FROM bulk_jobs WHERE id IN (
    SELECT id FROM bulk_jobs WHERE finished_at < now() - make_interval(days => %(days)s)
    ORDER BY finished_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
RETURNING id

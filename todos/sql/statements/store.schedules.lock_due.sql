-- store.schedules.lock_due
-- built by todos.core.store.schedules.lock_due()
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT s.id, s.cron, s.timezone, s.missed, s.next_fire_at, clock_timestamp() AS now
FROM schedules s
WHERE NOT s.paused AND s.next_fire_at <= clock_timestamp()
ORDER BY s.next_fire_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED

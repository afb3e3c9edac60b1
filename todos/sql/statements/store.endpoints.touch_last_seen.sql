-- store.endpoints.touch_last_seen
-- built by todos.core.store.endpoints.touch_last_seen()
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH seen AS (
    -- last seen: at most once a minute, never waiting for the endpoint's row (SEEN_DUE)
    UPDATE endpoints e SET last_seen_at = now()
    WHERE e.id = (SELECT s.id FROM endpoints s
                  WHERE s.id = %(endpoint_id)s
                    AND (s.last_seen_at IS NULL OR s.last_seen_at < now() - interval '1 minute')
                  FOR NO KEY UPDATE SKIP LOCKED)
    RETURNING e.id, e.team_id
),
seen_logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'seen', NULL, NULL, NULL, NULL, NULL
    FROM seen n)
SELECT count(*) AS stamped FROM seen

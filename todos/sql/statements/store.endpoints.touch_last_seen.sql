-- store.endpoints.touch_last_seen
-- built by todos.core.store.endpoints.touch_last_seen()
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH upd AS (
    UPDATE endpoints SET last_seen_at = now()
    WHERE id = %(endpoint_id)s AND (last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute')
    RETURNING id, team_id
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'seen', NULL, NULL, NULL, NULL, NULL
    FROM upd n)
SELECT count(*) AS stamped FROM upd

-- store.background.purge_terminal
-- built by todos.core.store.background.purge_terminal()
-- with:
--   older_than_days = 30
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH cand AS (
    -- each endpoint's oldest finished todos (``todos_endpoint_finished``, its finished time)
    SELECT o.id FROM endpoints e
    CROSS JOIN LATERAL (
        SELECT t.id FROM todos t
        WHERE t.endpoint_id = e.id AND t.completed_at < now() - make_interval(days => %(days)s)
          AND (t.state IN ('done', 'canceled')
               OR (t.state = 'failed' AND t.next_retry_at IS NULL))
        LIMIT %(limit)s
        FOR UPDATE OF t SKIP LOCKED
    ) o
    LIMIT %(limit)s
),
purged AS (
    DELETE FROM todos t USING cand c WHERE t.id = c.id
    RETURNING t.id, t.queue, t.endpoint_id, t.claimed_at, todo_board_state(t.state, t.next_retry_at) AS state_before
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'purge',
           r.state_before,
           NULL,
           NULL,
           NULL,
           CASE WHEN (r.state_before) = 'claimed'
                THEN extract(epoch FROM now() - r.claimed_at)::double precision END
    FROM purged r JOIN endpoints le ON le.id = r.endpoint_id)
SELECT p.id FROM purged p

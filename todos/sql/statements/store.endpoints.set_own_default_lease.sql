-- store.endpoints.set_own_default_lease
-- built by todos.core.store.endpoints.set_own_default_lease()
-- with:
--   endpoint_id = UUID('00000000-0000-4000-8000-00000000e001')
--   seconds = 600
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH upd AS (
    UPDATE endpoints SET default_lease_ttl_seconds = %(lease)s
    WHERE id = %(endpoint_id)s AND state = 'active'
    RETURNING id, team_id, slug, name, credential_prefix, scope_verbs, scope_queues,
    default_lease_ttl_seconds, state, created_at, created_by, revoked_at, expires_at, last_seen_at, capabilities,
    claims_paused_at, claims_paused_by
),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'endpoint', NULL, NULL, NULL, NULL, NULL
    FROM upd n)
SELECT u.*, (SELECT count(pg_notify('board_credentials', json_build_object('endpoints', c.ids)::text))
        FROM (SELECT CASE WHEN count(*) <= 100 THEN array_agg(n.id) END AS ids
              FROM upd n HAVING count(*) > 0) c) AS forgotten FROM upd u

-- store.endpoints.vend
-- built by todos.core.store.endpoints.vend()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
--   name = 'Worker'
--   slug = 'worker'
--   verbs = ['list_todos', 'get_todo', 'claim_next', 'claim', 'heartbeat', 'complete', 'fail',
--       'release']
--   queues = ['default']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH ins AS (
    INSERT INTO endpoints (team_id, slug, name, credential_hash, credential_prefix, scope_verbs,
                           scope_queues, default_lease_ttl_seconds, expires_at, created_by, capabilities)
    SELECT %(team_id)s, %(slug)s, %(name)s, %(hash)s, %(prefix)s, %(verbs)s::text[], %(queues)s::text[],
           %(lease)s, %(expires_at)s, %(user_id)s, %(capabilities)s::text[]
    WHERE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin')) AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
      AND NOT EXISTS (SELECT 1 FROM endpoints WHERE slug = %(slug)s)
    ON CONFLICT (slug) DO NOTHING
    RETURNING *
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT s.team_id, %(user_id)s, %(actor)s, 'endpoint.vend', NULL, s.id, NULL, %(note)s,
           jsonb_build_object('verbs', s.scope_verbs, 'queues', s.scope_queues)
    FROM ins s),
logged AS (INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT n.team_id, n.id, NULL, NULL, 'endpoint', NULL, NULL, NULL, NULL, NULL
    FROM ins n)
SELECT i.*, EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s) AS member,
       EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = %(team_id)s AND m.user_id = %(user_id)s
          AND m.role IN ('admin')) AS allowed,
       EXISTS (SELECT 1 FROM endpoints WHERE slug = %(slug)s) AS slug_taken
FROM (SELECT 1) one LEFT JOIN ins i ON true

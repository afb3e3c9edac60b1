-- selectors.overview.rows
-- built by todos.core.selectors.overview.overview(), the statement #1 it runs
-- with:
--   viewer = Viewer(user_id=7, username='olive', is_superuser=False,
--       teams=(TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a001'), slug='team-a',
--       name='Alpha', role='operator'),
--       TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a002'), slug='team-b', name='Beta',
--       role='viewer')),
--       endpoints=(EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='worker', name='Worker',
--       state='active', scope_queues=('default', 'other'), capabilities=()),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e002'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='sibling', name='Sibling',
--       state='active', scope_queues=('default',), capabilities=()),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e003'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a002'), slug='watcher', name='Watcher',
--       state='active', scope_queues=('default',), capabilities=())))
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH visible AS (
    SELECT * FROM unnest(%(eps)s::uuid[], %(ep_teams)s::uuid[]) AS v(endpoint_id, team_id)
), counted AS (
    SELECT c.endpoint_id, c.queue, c.state, c.n FROM todo_counts c
    WHERE c.endpoint_id = ANY(%(eps)s::uuid[])
      AND c.state IN ('pending', 'blocked', 'scheduled', 'claimed', 'retry', 'dead')
), pair AS (
    SELECT * FROM unnest(%(scope_eps)s::uuid[], %(scope_queues)s::text[]) AS s(endpoint_id, queue)
    UNION SELECT endpoint_id, queue FROM counted WHERE n > 0
    UNION SELECT v.endpoint_id, qp.queue FROM queue_pauses qp JOIN visible v USING (team_id)
), team_queue AS (
    SELECT v.team_id, p.queue, array_agg(DISTINCT p.endpoint_id) AS eps,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0)::bigint AS pending,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'blocked'), 0)::bigint AS blocked,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'scheduled'), 0)::bigint AS scheduled,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'claimed'), 0)::bigint AS claimed,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'retry'), 0)::bigint AS retry,
           coalesce(sum(c.n) FILTER (WHERE c.state = 'dead'), 0)::bigint AS dead
    FROM pair p JOIN visible v USING (endpoint_id)
    LEFT JOIN counted c ON c.endpoint_id = p.endpoint_id AND c.queue = p.queue
    GROUP BY v.team_id, p.queue
)
SELECT r.*,
       (SELECT min(o.created_at) FROM unnest(r.eps) AS e(id) CROSS JOIN LATERAL (
            SELECT t.created_at FROM todos t
            WHERE t.endpoint_id = e.id AND t.queue = r.queue AND t.state = 'pending' AND t.next_retry_at IS NULL
            ORDER BY t.created_at LIMIT 1) o) AS oldest_pending
FROM team_queue r

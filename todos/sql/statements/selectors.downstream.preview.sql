-- selectors.downstream.preview
-- built by todos.core.selectors.downstream.preview(), the statement #1 it runs
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
--   todo_id = 'td_00000000000000000000000000000001'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH RECURSIVE downstream(id, depth) AS (
    SELECT d.child_id, 1 FROM todo_dependencies d WHERE d.parent_id = %(id)s
    UNION
    SELECT d.child_id, w.depth + 1 FROM todo_dependencies d JOIN downstream w ON d.parent_id = w.id
    WHERE w.depth < 10000
),
nearest AS (SELECT id, min(depth) AS depth FROM downstream GROUP BY id)
SELECT t.id, t.title, todo_board_state(t.state, t.next_retry_at) AS state, n.depth,
       ((t.state IN ('pending', 'failed') OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)))) AS cancels,
       count(*) OVER () AS total,
       count(*) FILTER (WHERE (t.state IN ('pending', 'failed') OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)))) OVER () AS canceling
FROM nearest n JOIN todos t ON t.id = n.id
WHERE t.endpoint_id = ANY(%(eps)s::uuid[])
ORDER BY n.depth, t.created_at, t.id
LIMIT %(limit)s

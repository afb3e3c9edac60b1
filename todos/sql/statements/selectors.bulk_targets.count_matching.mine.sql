-- selectors.bulk_targets.count_matching.mine
-- built by todos.core.selectors.bulk_targets.count_matching(), the statement #1 it runs
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
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=True, q='', kind='',
--       priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='newest', after=None, before=None, errors=())
--   action = 'cancel'
--   cap = 10000
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['pending', 'claimed', 'done', 'failed', 'canceled']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND (t.state IN ('pending', 'failed') OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)))
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y UNION ALL
    (SELECT t.created_at, t.id
     FROM todos t
     WHERE t.state = 'claimed' AND t.owner = %(me)s AND t.assignee IS DISTINCT FROM %(me)s
       AND t.endpoint_id = ANY(%(eps)s::uuid[])
       AND (t.state IN ('pending', 'failed') OR (t.state = 'claimed' AND EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)))
     ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s)
) x
LIMIT %(cap)s) counted

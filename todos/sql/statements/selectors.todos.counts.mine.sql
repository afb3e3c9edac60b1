-- selectors.todos.counts.mine
-- built by todos.selectors.todos.state_counts(), the statement #1 it runs
-- with:
--   viewer = Viewer(user_id=7, username='olive', is_superuser=False,
--       teams=(TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a001'), slug='team-a',
--       name='Alpha', role='operator'),
--       TeamAccess(id=UUID('00000000-0000-4000-8000-00000000a002'), slug='team-b', name='Beta',
--       role='viewer')),
--       endpoints=(EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='worker', name='Worker',
--       state='active', scope_queues=('default', 'other')),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e002'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), slug='sibling', name='Sibling',
--       state='active', scope_queues=('default',)),
--       EndpointRef(id=UUID('00000000-0000-4000-8000-00000000e003'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a002'), slug='watcher', name='Watcher',
--       state='active', scope_queues=('default',))))
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=True, q='', sort='newest',
--       after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_all)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_all)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_all)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_all)s
    ) y UNION ALL
    (SELECT t.created_at, t.id FROM todos t WHERE t.state = 'claimed' AND t.owner = %(me_all)s AND t.assignee IS DISTINCT FROM %(me_all)s AND t.endpoint_id = ANY(%(eps_all)s::uuid[])
     ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_all)s)
) x
LIMIT %(cap_all)s) counted) AS "all",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_pending)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_pending)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_pending)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_pending)s
    ) y
) x
LIMIT %(cap_pending)s) counted) AS "pending",
       (SELECT count(*) FROM todos t WHERE t.endpoint_id = ANY(%(eps_claimed)s::uuid[]) AND t.state = 'claimed' AND (t.assignee = %(me_claimed)s OR t.owner = %(me_claimed)s)) AS "claimed",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_retry)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_retry)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_retry)s::uuid[]) AND t.next_retry_at IS NOT NULL
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_retry)s
    ) y
) x
LIMIT %(cap_retry)s) counted) AS "retry",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_dead)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_dead)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_dead)s::uuid[]) AND t.next_retry_at IS NULL
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_dead)s
    ) y
) x
LIMIT %(cap_dead)s) counted) AS "dead",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_done)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_done)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_done)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_done)s
    ) y
) x
LIMIT %(cap_done)s) counted) AS "done",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(%(mine_states_canceled)s::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id FROM todos t WHERE t.assignee = %(me_canceled)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps_canceled)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap_canceled)s
    ) y
) x
LIMIT %(cap_canceled)s) counted) AS "canceled"

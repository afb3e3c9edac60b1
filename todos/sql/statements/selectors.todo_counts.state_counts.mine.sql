-- selectors.todo_counts.state_counts.mine
-- built by todos.core.selectors.todo_counts.state_counts(), the statement #1 it runs
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
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['pending', 'claimed', 'done', 'failed', 'canceled']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y UNION ALL
    (SELECT t.created_at, t.id
     FROM todos t
     WHERE t.state = 'claimed' AND t.owner = %(me)s AND t.assignee IS DISTINCT FROM %(me)s
       AND t.endpoint_id = ANY(%(eps)s::uuid[])
     ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s)
) x
LIMIT %(cap)s) counted) AS "all",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['pending']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND t.next_retry_at IS NULL
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "pending",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['pending']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND t.next_retry_at = 'infinity'
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "blocked",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['pending']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND t.next_retry_at < 'infinity'
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "scheduled",
       (SELECT count(*) FROM todos t WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
          AND (t.assignee = %(me)s OR t.owner = %(me)s)) AS "claimed",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['failed']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND t.next_retry_at IS NOT NULL
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "retry",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['failed']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
          AND t.next_retry_at IS NULL
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "dead",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['done']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "done",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM (
    SELECT y.* FROM unnest(ARRAY['canceled']::text[]) AS s(state)
    CROSS JOIN LATERAL (
        SELECT t.created_at, t.id
        FROM todos t
        WHERE t.assignee = %(me)s AND t.state = s.state AND t.endpoint_id = ANY(%(eps)s::uuid[])
        ORDER BY t.created_at ASC, t.id ASC LIMIT %(cap)s
    ) y
) x
LIMIT %(cap)s) counted) AS "canceled"

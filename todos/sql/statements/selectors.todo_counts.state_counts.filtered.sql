-- selectors.todo_counts.state_counts.filtered
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
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=False, q='',
--       kind='report', priority=PriorityRange(low=5, high=5), created_from=None,
--       created_to=None, finished_from=None, finished_to=None, failed_with='', sort='newest',
--       after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "all",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'pending'
      AND t.next_retry_at IS NULL
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "pending",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'pending'
      AND t.next_retry_at = 'infinity'
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "blocked",
       (SELECT count(*) AS n FROM (
SELECT t.created_at, t.id
FROM todos t
WHERE t.endpoint_id = ANY(%(eps)s::uuid[])
  AND t.state = 'pending'
  AND t.next_retry_at < 'infinity'
  AND t.kind = %(kind)s
  AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
LIMIT %(cap)s) counted) AS "scheduled",
       (SELECT count(*) FROM todos t WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.state = 'claimed'
          AND t.kind = %(kind)s
          AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s) AS "claimed",
       (SELECT count(*) AS n FROM (
SELECT t.created_at, t.id
FROM todos t
WHERE t.endpoint_id = ANY(%(eps)s::uuid[])
  AND t.state = 'failed'
  AND t.next_retry_at IS NOT NULL
  AND t.kind = %(kind)s
  AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
LIMIT %(cap)s) counted) AS "retry",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'failed'
      AND t.next_retry_at IS NULL
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "dead",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'done'
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "done",
       (SELECT count(*) AS n FROM (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'canceled'
      AND t.kind = %(kind)s
      AND t.priority BETWEEN %(priority_low)s AND %(priority_high)s
    ORDER BY t.created_at ASC, t.id ASC
    LIMIT %(cap)s
) x
LIMIT %(cap)s) counted) AS "canceled"

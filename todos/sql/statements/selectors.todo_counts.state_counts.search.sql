-- selectors.todo_counts.state_counts.search
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
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=False, q='timeout',
--       kind='', priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='newest', after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH window_keys AS MATERIALIZED (
SELECT x.* FROM (
  (SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = (%(eps)s::uuid[])[1]
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(scan)s) UNION ALL
  (SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = (%(eps)s::uuid[])[2]
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(scan)s) UNION ALL
  (SELECT t.created_at, t.id
    FROM todos t
    WHERE t.endpoint_id = (%(eps)s::uuid[])[3]
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(scan)s)
) x
ORDER BY x.created_at DESC, x.id DESC
LIMIT %(scan)s)
SELECT (SELECT count(*) FROM window_keys) AS scanned,
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at IS NULL) AS "pending",
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at = 'infinity') AS "blocked",
       count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at < 'infinity') AS "scheduled",
       count(*) FILTER (WHERE t.state = 'claimed') AS "claimed",
       count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL) AS "retry",
       count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NULL) AS "dead",
       count(*) FILTER (WHERE t.state = 'done') AS "done",
       count(*) FILTER (WHERE t.state = 'canceled') AS "canceled"
FROM window_keys k JOIN todos t ON t.id = k.id
WHERE (t.id ILIKE %(pattern)s OR t.title ILIKE %(pattern)s OR t.kind ILIKE %(pattern)s
        OR t.source ILIKE %(pattern)s OR t.idempotency_key ILIKE %(pattern)s OR t.payload::text ILIKE %(pattern)s
        OR (t.attempts_total > 0 AND EXISTS (
        SELECT 1 FROM todo_attempts a
        WHERE a.todo_id = t.id
          AND a.search_doc @@ phraseto_tsquery('simple', %(phrase)s))))

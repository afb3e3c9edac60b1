-- selectors.todo_list.list_page.search
-- built by todos.core.selectors.todo_list.list_page(), the statement #1 it runs
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
LIMIT %(scan)s),
window_rows AS MATERIALIZED (
    SELECT t.id, t.endpoint_id, t.queue, t.kind, t.title, t.state,
       t.owner, t.assignee, t.priority, t.attempt, t.max_attempts, t.attempts_total,
       t.lease_expires_at,
       nullif(t.next_retry_at, 'infinity') AS next_retry_at,
       (t.state = 'pending' AND t.next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
       t.created_at, t.updated_at, t.claimed_at, t.completed_at, t.concurrency_key, t.requires,
       (t.state = 'claimed' AND t.lease_expires_at < now()) AS lease_lapsed, t.source, t.idempotency_key, t.payload
    FROM window_keys k JOIN todos t ON t.id = k.id
),
hits AS MATERIALIZED (
    SELECT w.* FROM window_rows w
    WHERE (w.id ILIKE %(pattern)s OR w.title ILIKE %(pattern)s OR w.kind ILIKE %(pattern)s
        OR w.source ILIKE %(pattern)s OR w.idempotency_key ILIKE %(pattern)s OR w.payload::text ILIKE %(pattern)s
        OR (w.attempts_total > 0 AND EXISTS (
        SELECT 1 FROM todo_attempts a
        WHERE a.todo_id = w.id
          AND a.search_doc @@ phraseto_tsquery('simple', %(phrase)s))))
),
tabs AS (
    SELECT count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at IS NULL) AS tab_pending,
           count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at = 'infinity') AS tab_blocked,
           count(*) FILTER (WHERE t.state = 'pending' AND t.next_retry_at < 'infinity') AS tab_scheduled,
           count(*) FILTER (WHERE t.state = 'claimed') AS tab_claimed,
           count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NOT NULL) AS tab_retry,
           count(*) FILTER (WHERE t.state = 'failed' AND t.next_retry_at IS NULL) AS tab_dead,
           count(*) FILTER (WHERE t.state = 'done') AS tab_done,
           count(*) FILTER (WHERE t.state = 'canceled') AS tab_canceled
    FROM hits t
),
matched AS (
    SELECT w.*, false AS is_edge FROM hits w
    ORDER BY w.created_at DESC, w.id DESC LIMIT %(limit)s
),
edge AS (
    SELECT w.*, true AS is_edge FROM window_rows w
    WHERE (SELECT count(*) FROM window_rows) >= %(scan)s
    ORDER BY w.created_at ASC, w.id ASC LIMIT 1
)
SELECT r.*, tabs.* FROM (SELECT * FROM matched UNION ALL SELECT * FROM edge) r CROSS JOIN tabs

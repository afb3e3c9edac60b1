-- selectors.todo_export.export_page
-- built by todos.core.selectors.todo_export.export_page()
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
--   f = TodoFilter(state='dead', queue='', endpoint='', team='', mine=False, q='timeout',
--       kind='', priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='newest', after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH page AS MATERIALIZED (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.id, t.queue, t.kind, t.title, t.state, t.next_retry_at, t.priority,
           t.attempts_total, t.max_attempts, t.created_at, t.completed_at, t.result
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'failed'
      AND t.next_retry_at IS NULL
      AND (t.id ILIKE %(pattern)s OR t.title ILIKE %(pattern)s OR t.kind ILIKE %(pattern)s
        OR t.source ILIKE %(pattern)s OR t.idempotency_key ILIKE %(pattern)s OR t.payload::text ILIKE %(pattern)s
        OR (t.attempts_total > 0 AND EXISTS (
        SELECT 1 FROM todo_attempts a
        WHERE a.todo_id = t.id
          AND a.search_doc @@ phraseto_tsquery('simple', %(phrase)s))))
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(limit)s
) x
ORDER BY x.created_at DESC, x.id DESC
LIMIT %(limit)s)
SELECT p.id, p.queue, p.kind, p.title, todo_board_state(p.state, p.next_retry_at) AS board_state,
       p.priority, p.attempts_total,
       p.max_attempts, p.created_at, p.completed_at,
       coalesce((SELECT coalesce(nullif(concat_ws(': ',
        nullif(btrim(a.error->>'type'), ''),
        nullif(btrim(split_part(a.error->>'message', E'\n', 1), E' \t\r'), '')), ''), nullif(a.summary, ''))
                 FROM todo_attempts a WHERE a.todo_id = p.id ORDER BY a.seq DESC LIMIT 1),
                p.result->>'error') AS last_reason
FROM page p
ORDER BY p.created_at DESC, p.id DESC

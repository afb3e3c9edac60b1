-- selectors.dead_letters.groups
-- built by todos.core.selectors.dead_letters.groups(), the statement #1 it runs
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
--   f = TodoFilter(state='all', queue='', endpoint='', team='', mine=False, q='', kind='',
--       priority=None, created_from=None, created_to=None, finished_from=None,
--       finished_to=None, failed_with='', sort='newest', after=None, before=None, errors=())
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH d AS MATERIALIZED (
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT t.id, t.title, t.result, t.attempts_total, t.created_at
    FROM todos t
    WHERE t.endpoint_id = e.id AND t.state = 'failed'
      AND t.next_retry_at IS NULL
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT %(scan)s
) x
ORDER BY x.created_at DESC, x.id DESC
LIMIT %(scan)s),
r AS (
    SELECT d.id, d.title, d.created_at,
           coalesce(
        nullif(concat_ws(': ',
        nullif(btrim(a.error->>'type'), ''),
        nullif(btrim(split_part(a.error->>'message', E'\n', 1), E' \t\r'), '')), ''),
        nullif(a.summary, ''), d.result->>'error', '(no reason recorded)') AS reason,
           board_reason_group(a.error, a.summary, d.result->>'error') AS fingerprint
    FROM d LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
)
SELECT g.fingerprint, g.n AS count, ex.reason AS example_reason, ex.id AS example_id, ex.title AS example_title,
       (SELECT count(*) FROM d) AS scanned
FROM (SELECT fingerprint, count(*) AS n, max(created_at) AS newest FROM r GROUP BY fingerprint) g
CROSS JOIN LATERAL (
    SELECT r.reason, r.id, r.title FROM r WHERE r.fingerprint = g.fingerprint ORDER BY r.created_at DESC LIMIT 1
) ex
ORDER BY g.n DESC, g.newest DESC
LIMIT 100

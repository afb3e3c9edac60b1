-- selectors.flow.flow
-- built by todos.selectors.flow.flow(), the statement #1 it runs
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
--   range_key = '24h'
--   queue = 'default'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH clock AS (SELECT now() AS now, date_trunc(%(grain)s, now()) AS current),
picked AS (
    SELECT date_bin(%(step)s::interval, f.at, timestamptz '1970-01-01 00:00:00+00') AS start,
           f.completed, f.failed, f.died, f.waited, f.ran
    FROM clock c JOIN todo_flow f
      ON f.team_id = ANY(%(teams)s::uuid[]) AND f.grain = %(grain)s AND f.queue = %(queue)s
     AND f.at > c.current - %(since)s::interval
),
counted AS (
    SELECT start, sum(completed)::bigint AS completed, sum(failed)::bigint AS failed, sum(died)::bigint AS died
    FROM picked GROUP BY start
),
summed AS (
    SELECT start, array_agg(w ORDER BY i) AS waited, array_agg(r ORDER BY i) AS ran
    FROM (SELECT p.start, u.i, sum(u.w)::bigint AS w, sum(u.r)::bigint AS r
          FROM picked p, unnest(p.waited, p.ran) WITH ORDINALITY u(w, r, i)
          GROUP BY p.start, u.i) per_bucket
    GROUP BY start
)
SELECT c.now, c.current, k.start AS at, k.completed, k.failed, k.died, s.waited, s.ran
FROM clock c LEFT JOIN (counted k JOIN summed s USING (start)) ON true
ORDER BY k.start

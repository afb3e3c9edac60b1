-- selectors.flow.flow
-- built by todos.core.selectors.flow.flow(), the statement #1 it runs
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
--   range_key = '24h'
--   queue = 'default'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH clock AS (SELECT now() AS now, date_trunc(%(grain)s, now()) AS current)
SELECT c.now, c.current, k.at, k.completed, k.failed, k.died, k.waited, k.ran
FROM clock c LEFT JOIN LATERAL (
    SELECT date_bin(%(step)s::interval, f.at, timestamptz '1970-01-01 00:00:00+00') AS at,
           sum(f.completed)::bigint AS completed, sum(f.failed)::bigint AS failed, sum(f.died)::bigint AS died,
           ARRAY[sum(f.waited[1]), sum(f.waited[2]), sum(f.waited[3]), sum(f.waited[4]),
                 sum(f.waited[5]), sum(f.waited[6]), sum(f.waited[7]), sum(f.waited[8]),
                 sum(f.waited[9]), sum(f.waited[10]), sum(f.waited[11]), sum(f.waited[12]),
                 sum(f.waited[13]), sum(f.waited[14]), sum(f.waited[15]), sum(f.waited[16]),
                 sum(f.waited[17]), sum(f.waited[18]), sum(f.waited[19]), sum(f.waited[20]),
                 sum(f.waited[21]), sum(f.waited[22]), sum(f.waited[23]), sum(f.waited[24]),
                 sum(f.waited[25]), sum(f.waited[26]), sum(f.waited[27]), sum(f.waited[28]),
                 sum(f.waited[29]), sum(f.waited[30]), sum(f.waited[31]), sum(f.waited[32]),
                 sum(f.waited[33]), sum(f.waited[34]), sum(f.waited[35]), sum(f.waited[36]),
                 sum(f.waited[37]), sum(f.waited[38]), sum(f.waited[39]), sum(f.waited[40]),
                 sum(f.waited[41]), sum(f.waited[42]), sum(f.waited[43]), sum(f.waited[44]),
                 sum(f.waited[45]), sum(f.waited[46]), sum(f.waited[47]), sum(f.waited[48]),
                 sum(f.waited[49]), sum(f.waited[50])]::bigint[] AS waited,
           ARRAY[sum(f.ran[1]), sum(f.ran[2]), sum(f.ran[3]), sum(f.ran[4]),
                 sum(f.ran[5]), sum(f.ran[6]), sum(f.ran[7]), sum(f.ran[8]),
                 sum(f.ran[9]), sum(f.ran[10]), sum(f.ran[11]), sum(f.ran[12]),
                 sum(f.ran[13]), sum(f.ran[14]), sum(f.ran[15]), sum(f.ran[16]),
                 sum(f.ran[17]), sum(f.ran[18]), sum(f.ran[19]), sum(f.ran[20]),
                 sum(f.ran[21]), sum(f.ran[22]), sum(f.ran[23]), sum(f.ran[24]),
                 sum(f.ran[25]), sum(f.ran[26]), sum(f.ran[27]), sum(f.ran[28]),
                 sum(f.ran[29]), sum(f.ran[30]), sum(f.ran[31]), sum(f.ran[32]),
                 sum(f.ran[33]), sum(f.ran[34]), sum(f.ran[35]), sum(f.ran[36]),
                 sum(f.ran[37]), sum(f.ran[38]), sum(f.ran[39]), sum(f.ran[40]),
                 sum(f.ran[41]), sum(f.ran[42]), sum(f.ran[43]), sum(f.ran[44]),
                 sum(f.ran[45]), sum(f.ran[46]), sum(f.ran[47]), sum(f.ran[48]),
                 sum(f.ran[49]), sum(f.ran[50])]::bigint[] AS ran
    FROM todo_flow f
    WHERE f.team_id = ANY(%(teams)s::uuid[]) AND f.grain = %(grain)s AND f.queue = %(queue)s
      AND f.at > c.current - %(since)s::interval
    GROUP BY 1
) k ON true
ORDER BY k.at

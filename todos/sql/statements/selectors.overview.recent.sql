-- selectors.overview.recent
-- built by todos.core.selectors.overview.overview(), the statement #2 it runs
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
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT endpoint_id, queue, sum(done)::bigint AS done, sum(dead)::bigint AS failed,
       array_agg(bucket) AS done_buckets, array_agg(done) AS done_counts
FROM (
    SELECT endpoint_id, queue, sum(done)::bigint AS done, sum(dead)::bigint AS dead,
           least(floor(date_part('epoch', date_trunc('minute', now()) - minute) / 300),
                 11)::int AS bucket
    FROM todo_finished_minutes
    WHERE endpoint_id = ANY(%(eps)s::uuid[])
      AND minute > date_trunc('minute', now()) - make_interval(mins => 60)
    GROUP BY 1, 2, 5
) per_bucket
GROUP BY 1, 2

-- selectors.bulk_jobs.get
-- built by todos.core.selectors.bulk_jobs.get(), the statement #1 it runs
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
--   job_id = UUID('00000000-0000-4000-8000-00000000b001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT id, action, scope, description, note, state, total, processed, changed, skipped, truncated,
       skipped_sample, error, worker, created_at, started_at, finished_at,
       (state IN ('queued', 'running')
        AND coalesce(heartbeat_at, created_at)
            < now() - make_interval(secs => 30)) AS stalled
FROM bulk_jobs WHERE id = %(id)s AND user_id = %(user_id)s

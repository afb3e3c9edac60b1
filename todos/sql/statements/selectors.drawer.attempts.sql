-- selectors.drawer.attempts
-- built by todos.core.selectors.drawer.attempts(), the statement #1 it runs
-- with:
--   todo = TodoRow(id='td_00000000000000000000000000000001',
--       endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'), queue='default', kind=None,
--       title='A todo', state='failed', owner=None, assignee=None, priority=100, attempt=3,
--       max_attempts=3, attempts_total=3, lease_expires_at=None, next_retry_at=None,
--       blocked=False, created_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), updated_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), claimed_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), completed_at=datetime.datetime(2026, 1, 1, 12, 0,
--       tzinfo=datetime.timezone.utc), lease_lapsed=False, concurrency_key=None, requires=[])
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT a.seq, a.attempt, a.claimer_kind, a.owner, a.claimant, a.claimed_at, a.last_heartbeat_at,
       a.lease_expires_at, a.ended_at, a.outcome, a.disposition, a.summary, a.summary_truncated,
       a.artifact, a.ended_by, a.error, a.traceparent,
       (a.ended_at IS NULL AND a.lease_expires_at < now()) AS lease_lapsed
FROM todo_attempts a
WHERE a.todo_id = %(id)s
ORDER BY a.seq DESC
LIMIT %(limit)s

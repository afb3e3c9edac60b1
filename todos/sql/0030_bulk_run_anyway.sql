-- Bulk run anyway: a bulk job may also stop blocked todos waiting for their parents (the Board's
-- Blocked tab: "Run selected anyway", "Run all matching anyway…"), worked chunk by chunk like
-- the other bulk actions.
--
-- Widens the job's action CHECK, as 0019 did: the new constraint is added NOT VALID and validated
-- after, so the ALTER holds its ACCESS EXCLUSIVE lock only for the catalog change; the validation
-- scans bulk_jobs (small: finished jobs are purged after a week) under SHARE UPDATE EXCLUSIVE.
ALTER TABLE bulk_jobs DROP CONSTRAINT IF EXISTS bulk_jobs_action_check;
ALTER TABLE bulk_jobs ADD CONSTRAINT bulk_jobs_action_check
    CHECK (action IN ('retry', 'cancel', 'run_now', 'run_anyway')) NOT VALID;
ALTER TABLE bulk_jobs VALIDATE CONSTRAINT bulk_jobs_action_check;

-- Bulk run now: a bulk job may also make scheduled todos claimable now (the Board's Scheduled tab:
-- "Run selected now", "Run all matching now…"), worked chunk by chunk like retry and cancel.
--
-- Widens the job's action CHECK. The new constraint is added NOT VALID and validated after, so
-- the ALTER holds its ACCESS EXCLUSIVE lock only for the catalog change; the validation scans
-- bulk_jobs (small: finished jobs are purged after a week) under SHARE UPDATE EXCLUSIVE.
ALTER TABLE bulk_jobs DROP CONSTRAINT IF EXISTS bulk_jobs_action_check;
ALTER TABLE bulk_jobs ADD CONSTRAINT bulk_jobs_action_check
    CHECK (action IN ('retry', 'cancel', 'run_now')) NOT VALID;
ALTER TABLE bulk_jobs VALIDATE CONSTRAINT bulk_jobs_action_check;

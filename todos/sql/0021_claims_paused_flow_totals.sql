-- An endpoint's claims can be paused by a team admin (the Board's Agents page): while
-- claims_paused_at is set, every claim by the endpoint is refused ``paused``; its reports
-- (heartbeat, complete, fail, release) still land. claims_paused_by is the person who paused it,
-- named in the refusal so the agent's operator knows whom to ask.
--
-- Both columns are nullable with no default: ADD COLUMN is a catalog change only (no rewrite),
-- under a brief ACCESS EXCLUSIVE lock on endpoints.
ALTER TABLE endpoints ADD COLUMN IF NOT EXISTS claims_paused_at timestamptz;
ALTER TABLE endpoints ADD COLUMN IF NOT EXISTS claims_paused_by text;

-- Indexes for the Board's reads beyond the lists 0002's indexes serve. Like those, none covers a
-- column a heartbeat writes (lease_expires_at, updated_at, last_heartbeat_at), in its key or in
-- its predicate, so heartbeats stay HOT updates.

-- Dead letters (failed, no retry window): the operator's triage list, its count and the
-- grouping by failure reason, newest first per endpoint. Rows enter when a todo is dead-lettered
-- and leave when it is retried, canceled or purged; a heartbeat never touches them.
CREATE INDEX todos_dead_letters ON todos (endpoint_id, created_at, id)
    WHERE state = 'failed' AND next_retry_at IS NULL;

-- Agents at a glance and /metrics: "how did this endpoint's attempts end in the last hour?"
-- Closed attempts by claiming endpoint and end time; closing an attempt writes ended_at once.
CREATE INDEX todo_attempts_endpoint_ended ON todo_attempts (claimer_endpoint_id, ended_at)
    WHERE ended_at IS NOT NULL;

-- "Assigned to me": the todo list's `mine` filter (assignee = the human, or a lease the human
-- holds). Without it the filter walked each endpoint's whole history looking for the few rows
-- assigned to the human: 11 s for one team at 5M todos (bench/board_scale.py). Per state, newest
-- first, like the endpoint indexes of 0002, so each state is one ordered index scan that stops
-- after a page. Partial: most todos are never assigned. assignee is written by `assign` only, never
-- by a heartbeat, so heartbeats stay HOT updates.
-- endpoint_id is carried (INCLUDE) so that keeping the scan to the viewer's endpoints, and the
-- counts of the state tabs under the filter, read the index alone.
CREATE INDEX IF NOT EXISTS todos_assignee_state_created ON todos (assignee, state, created_at, id)
    INCLUDE (endpoint_id) WHERE assignee IS NOT NULL;
-- IF NOT EXISTS: on a large, busy table an operator can build it first without blocking writes
-- (CREATE INDEX CONCURRENTLY, same name and definition); migrate then has nothing to do.
